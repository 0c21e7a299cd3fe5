package console

import (
	"cmp"
	"html/template"
	"maps"
	"net/http"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/beamagents/beamagents/rehearse"
)

// rehearsalView is the rehearsal page: a report's summary, then its divergent keys, the most
// interesting first (rehearsalOrder), at most MaxListed of them.
type rehearsalView struct {
	S       rehearse.Summary
	Kinds   []rehearsalCount // first divergences by kind, most first
	Stopped []rehearsalCount // stopped keys by reason, most first
	Rows    []rehearsalRow
}

// rehearsalCount is how many keys have one kind of first divergence, or one reason to stop.
type rehearsalCount struct {
	Name string
	N    int
}

// rehearsalRow is one divergent key.
type rehearsalRow struct {
	Key    []byte
	Linked bool // the console's store knows the key: its entity page exists
	D      rehearse.Divergence
	Stop   rehearse.Stop
}

// kindRank orders the kinds of divergence, the most telling first: effects (a tool call, an
// approval), then a failure, then what a user reads, then state, and last a changed model
// request, which says only that the candidate asked something else.
var kindRank = map[rehearse.Kind]int{
	rehearse.KindTool: 0, rehearse.KindApproval: 1, rehearse.KindDeadLetter: 2,
	rehearse.KindFinal: 3, rehearse.KindState: 4, rehearse.KindModelRequest: 5,
}

// rank is k's place in kindRank; a kind this console does not know comes last.
func rank(k rehearse.Kind) int {
	if r, ok := kindRank[k]; ok {
		return r
	}
	return len(kindRank)
}

// rehearsalOrder sorts divergent keys: by kind (kindRank), then the earliest divergence
// (activation, then step) first, then in the report's order (stable).
func rehearsalOrder(a, b rehearsalRow) int {
	return cmp.Or(cmp.Compare(rank(a.D.Kind), rank(b.D.Kind)), cmp.Compare(a.D.Seq, b.D.Seq), cmp.Compare(a.D.Step, b.D.Step))
}

// newRehearsalView sums a report up for its page; the links are set per view (linkKnown).
func newRehearsalView(r *rehearse.Report) *rehearsalView {
	v := &rehearsalView{S: r.Summary, Kinds: mostFirst(r.Summary.ByKind), Stopped: mostFirst(r.Summary.Stopped)}
	for _, k := range r.Keys {
		if k.Divergence != nil {
			v.Rows = append(v.Rows, rehearsalRow{Key: k.Entity, D: *k.Divergence, Stop: k.Stop})
		}
	}
	slices.SortStableFunc(v.Rows, rehearsalOrder)
	return v
}

// mostFirst lists a count map, the largest count first, then by name.
func mostFirst[K ~string](m map[K]int) []rehearsalCount {
	var out []rehearsalCount
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, rehearsalCount{string(k), m[k]})
	}
	slices.SortStableFunc(out, func(a, b rehearsalCount) int { return b.N - a.N })
	return out
}

// Known reports, for each key, whether an output of it was ingested (its entity page exists),
// in one read.
func (s *Store) Known(keys [][]byte) []bool {
	out := make([]bool, len(keys))
	s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bEntities)
		for i, k := range keys {
			out[i] = b.Get(storeKey(k)) != nil
		}
		return nil
	})
	return out
}

func (c *server) rehearsal(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	v := *c.rehearsalView
	v.Rows = slices.Clone(v.Rows[:min(len(v.Rows), MaxListed)])
	if c.o.Store != nil {
		keys := make([][]byte, len(v.Rows))
		for i := range v.Rows {
			keys[i] = v.Rows[i].Key
		}
		for i, known := range c.o.Store.Known(keys) {
			v.Rows[i].Linked = known
		}
	}
	c.render(w, r, 200, "rehearsal", "Rehearsal", who, map[string]any{"V": &v, "All": len(c.rehearsalView.Rows)})
}

func init() {
	base := template.Must(template.New("base").Funcs(funcs).Parse(baseHTML))
	templates["rehearsal"] = template.Must(base.Parse(rehearsalHTML))
}

const rehearsalHTML = `{{define "content"}}{{$v := .Data.V}}{{$s := $v.S}}
<h1>Rehearsal</h1>
<p id="rehearsal-summary">{{$s.Keys}} keys rehearsed, <b>{{$s.Divergent}}</b> divergent (<b>{{num $s.Percent}}%</b>).</p>
<p id="rehearsal-spend">Answered from the baseline: {{$s.Answered}} model requests, {{$s.Inlined}} inline tool runs · live: {{$s.LiveCalls}} model calls, {{$s.LiveTokens}} tokens.</p>
<p id="rehearsal-tools">Tools newly called: {{range $i, $t := $s.NewTools}}{{if $i}}, {{end}}<code>{{text $t}}</code>{{else}}none{{end}} · no longer called: {{range $i, $t := $s.DroppedTools}}{{if $i}}, {{end}}<code>{{text $t}}</code>{{else}}none{{end}}.</p>
<h2>First divergences by kind</h2>
<table id="rehearsal-kinds"><tr><th>kind</th><th>keys</th></tr>
{{range $v.Kinds}}<tr><td>{{text .Name}}</td><td class="num">{{.N}}</td></tr>{{else}}<tr><td colspan="2">No divergence.</td></tr>{{end}}</table>
<h2>Stopped keys by reason</h2>
<table id="rehearsal-stopped"><tr><th>reason</th><th>keys</th></tr>
{{range $v.Stopped}}<tr><td>{{text .Name}}</td><td class="num">{{.N}}</td></tr>{{else}}<tr><td colspan="2">No key stopped.</td></tr>{{end}}</table>
<h2>Divergent keys</h2>
<p>Effects first (tool and arguments, approval), then dead-letter reason, final text, state and model request; within a kind, the earliest activation and step first.</p>
<table id="rehearsal-keys"><tr><th>entity key</th><th>seq</th><th>step</th><th>kind</th><th>what diverged</th><th>stopped</th></tr>
{{range $v.Rows}}<tr><td>{{if .Linked}}<a href="{{keyPath .Key}}">{{key .Key}}</a>{{else}}{{key .Key}}{{end}}</td><td class="num">{{.D.Seq}}</td><td class="num">{{.D.Step}}</td>
<td>{{text (print .D.Kind)}}{{if .D.Missing}} (not produced){{end}}</td><td><code>{{text .D.Detail}}</code></td><td>{{text (print .Stop)}}</td></tr>
{{else}}<tr><td colspan="6">No key diverged.</td></tr>{{end}}</table>
{{if gt .Data.All (len $v.Rows)}}<p>The first {{len $v.Rows}} of {{.Data.All}} divergent keys.</p>{{end}}
{{end}}`
