package console

import (
	"cmp"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// AgentStats is what the runs ingested say of one agent, for comparing the two slices of a
// canary (`run --canary_agent`): the agent is the one each trace event names
// (beam_agents.agent).
type AgentStats struct {
	Agent string
	// Activations counts the activations the agent started (external events), Ended those
	// that reached an end other than a suspension.
	Activations, Ended int64
	ModelCalls, Tokens int64
	// Refusals counts ERROR events: model calls refused (a circuit breaker) or failed.
	Refusals int64
	// Dead counts the dead letters of the agent's keys, by reason in Reasons; DeadRate is
	// Dead per activation started.
	Dead     int64
	DeadRate float64
	Reasons  []ReasonCount
	// Latency is the event time from an activation's start to its end, over the ended
	// activations: median, 95th percentile and maximum, in milliseconds.
	LatencyP50Ms, LatencyP95Ms, LatencyMaxMs int64
}

// Unattributed names the dead letters of keys no trace names an agent for.
const Unattributed = "(unattributed)"

// activationSpan is one activation's start and end, from its trace.
type activationSpan struct {
	agent          string
	start, end     int64
	started, ended bool
}

// agentRun is an activation of a key started at event time at by agent.
type agentRun struct {
	at    int64
	agent string
}

// agentTimeline is which agent ran a key from when: its activations by start time.
type agentTimeline []agentRun

// at is the agent that ran the key's latest activation started at or before t, else its
// first one's.
func (tl agentTimeline) at(t int64) string {
	if len(tl) == 0 {
		return Unattributed
	}
	a := tl[0].agent
	for _, e := range tl {
		if e.at > t {
			break
		}
		a = e.agent
	}
	return a
}

// Canary compares the agents the ingested traces name, in name order. A dead letter counts
// for the agent that ran its key's latest activation started at or before the dead letter's
// event time (a failed activation leaves no trace of its own).
func (s *Store) Canary() ([]AgentStats, error) {
	stats := map[string]*AgentStats{}
	of := func(agent string) *AgentStats {
		if stats[agent] == nil {
			stats[agent] = &AgentStats{Agent: agent}
		}
		return stats[agent]
	}
	acts := map[string]*activationSpan{}
	timelines := map[string]agentTimeline{}
	err := s.db.View(func(tx *bolt.Tx) error {
		tx.Bucket(bTraces).ForEach(func(_, v []byte) error {
			ev := &pb.TraceEvent{}
			if proto.Unmarshal(v, ev) != nil {
				return nil
			}
			countEvent(ev, of(agentOf(ev)), acts, timelines)
			return nil
		})
		for _, tl := range timelines {
			slices.SortStableFunc(tl, func(a, b agentRun) int { return cmp.Compare(a.at, b.at) })
		}
		return tx.Bucket(bDead).ForEach(func(_, v []byte) error {
			d := &pb.ActivationErrorRecord{}
			if proto.Unmarshal(v, d) != nil {
				return nil
			}
			a := of(timelines[string(d.GetEntityKey())].at(d.GetEventTimeMs()))
			a.Dead++
			a.Reasons = addReasonCount(a.Reasons, d.GetReason())
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	latencies := map[string][]int64{}
	for _, sp := range acts {
		if sp.started && sp.ended {
			latencies[sp.agent] = append(latencies[sp.agent], sp.end-sp.start)
		}
	}
	var out []AgentStats
	for _, name := range slices.Sorted(maps.Keys(stats)) {
		a := stats[name]
		a.Ended = int64(len(latencies[name]))
		a.LatencyP50Ms, a.LatencyP95Ms, a.LatencyMaxMs = percentiles(latencies[name])
		if a.Activations > 0 {
			a.DeadRate = float64(a.Dead) / float64(a.Activations)
		}
		slices.SortStableFunc(a.Reasons, func(x, y ReasonCount) int { return cmp.Compare(y.Count, x.Count) })
		out = append(out, *a)
	}
	return out, nil
}

func agentOf(ev *pb.TraceEvent) string {
	if a := ev.GetAttributes()[tracing.AttrAgent]; a != "" {
		return a
	}
	return Unattributed
}

// countEvent adds one trace event to its agent's counts, its activation's span and its key's
// timeline.
func countEvent(ev *pb.TraceEvent, a *AgentStats, acts map[string]*activationSpan, timelines map[string]agentTimeline) {
	attrs := ev.GetAttributes()
	id := string(ev.GetEntityKey()) + "\x00" + strconv.FormatInt(ev.GetSeq(), 10)
	sp := acts[id]
	if sp == nil {
		sp = &activationSpan{agent: a.Agent}
		acts[id] = sp
	}
	switch ev.GetEventType() {
	case pb.TraceEvent_ACTIVATION_START:
		if attrs[tracing.AttrActivationKind] == tracing.KindExternalEvent && ev.GetStepIndex() == 0 {
			a.Activations++
			sp.started, sp.start = true, ev.GetStartMs()
			k := string(ev.GetEntityKey())
			timelines[k] = append(timelines[k], agentRun{ev.GetStartMs(), a.Agent})
		}
	case pb.TraceEvent_ACTIVATION_END:
		if attrs[tracing.AttrActivationStatus] != tracing.StatusSuspended && (!sp.ended || ev.GetStartMs() > sp.end) {
			sp.ended, sp.end = true, ev.GetStartMs()
		}
	case pb.TraceEvent_LLM_CALL:
		in, _ := strconv.ParseInt(attrs[tracing.AttrInputTokens], 10, 64)
		out, _ := strconv.ParseInt(attrs[tracing.AttrOutputTokens], 10, 64)
		a.ModelCalls++
		a.Tokens += in + out
	case pb.TraceEvent_ERROR:
		a.Refusals++
	}
}

// addReasonCount counts one more dead letter of reason.
func addReasonCount(rs []ReasonCount, reason string) []ReasonCount {
	for i := range rs {
		if rs[i].Reason == reason {
			rs[i].Count++
			return rs
		}
	}
	return append(rs, ReasonCount{Reason: reason, Count: 1})
}

// percentiles returns the median, the 95th percentile (nearest rank) and the maximum of ds.
func percentiles(ds []int64) (p50, p95, maxMs int64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	rank := func(p int) int64 { return ds[(len(ds)*p+99)/100-1] }
	return rank(50), rank(95), ds[len(ds)-1]
}

func (c *server) canary(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	agents, err := c.o.Store.Canary()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, 200, "canary", "Canary", who, map[string]any{"Agents": agents})
}

func init() {
	templates["canary"] = template.Must(template.Must(template.New("base").Funcs(funcs).Parse(baseHTML)).Parse(canaryHTML))
}

// canaryHTML is the canary page: one column per agent the traces name.
const canaryHTML = `{{define "content"}}
<h1>Canary</h1>
<p>The agents the ingested traces name, side by side: a run with <code>--canary_agent</code> starts a stable slice of the keys on the candidate and the others on <code>--agent</code>. A dead letter counts for the agent that ran its key's latest activation.</p>
<table id="canary"><tr><th></th>{{range .Data.Agents}}<th data-agent="{{.Agent}}">{{text .Agent}}</th>{{end}}</tr>
<tr><td>Activations started</td>{{range .Data.Agents}}<td class="num" data-activations="{{.Activations}}">{{.Activations}}</td>{{end}}</tr>
<tr><td>Activations ended</td>{{range .Data.Agents}}<td class="num">{{.Ended}}</td>{{end}}</tr>
<tr><td>Dead letters (per activation)</td>{{range .Data.Agents}}<td class="num" data-dead="{{.Dead}}">{{.Dead}} ({{pct .DeadRate}})</td>{{end}}</tr>
<tr><td>Dead letters by reason</td>{{range .Data.Agents}}<td>{{range .Reasons}}<div>{{text .Reason}}: {{.Count}}</div>{{else}}none{{end}}</td>{{end}}</tr>
<tr><td>Refusals (ERROR events)</td>{{range .Data.Agents}}<td class="num">{{.Refusals}}</td>{{end}}</tr>
<tr><td>Model calls</td>{{range .Data.Agents}}<td class="num">{{.ModelCalls}}</td>{{end}}</tr>
<tr><td>Tokens</td>{{range .Data.Agents}}<td class="num" data-tokens="{{.Tokens}}">{{.Tokens}}</td>{{end}}</tr>
<tr><td>Latency, event time: median / p95 / max (ms)</td>{{range .Data.Agents}}<td class="num">{{.LatencyP50Ms}} / {{.LatencyP95Ms}} / {{.LatencyMaxMs}}</td>{{end}}</tr>
</table>
{{if not .Data.Agents}}<p>No traces yet.</p>{{end}}
{{end}}`
