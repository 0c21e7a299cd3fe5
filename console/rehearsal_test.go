package console_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/rehearse"
	"github.com/beamagents/beamagents/replay"
)

// supportRehearsal runs the support agent over its example traffic (every key exporting its
// state at the end, so the baseline's caches hold every answer), then rehearses it with another
// system prompt: every key that asks the model diverges at its first request and stops there.
// It returns the report and the baseline's outputs by key.
func supportRehearsal(t *testing.T) (*rehearse.Report, map[string][]console.Record) {
	t.Helper()
	var inputs []replay.Input
	index := map[string]int{}
	add := func(key, v []byte) {
		i, ok := index[string(key)]
		if !ok {
			i, index[string(key)] = len(inputs), len(inputs)
			inputs = append(inputs, replay.Input{Entity: key})
		}
		inputs[i].Values = append(inputs[i].Values, v)
	}
	// An envelope that does not decode is refused before the agent, in both runs.
	var refused [][]byte
	sc := bufio.NewScanner(bytes.NewReader(support.Envelopes))
	last := int64(0)
	for sc.Scan() {
		env, canon, err := drive.DecodeEnvelope(records.JSON, sc.Bytes())
		if err != nil {
			refused = append(refused, drive.Marshal(drive.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), records.ReasonEnvelopeInvalid, err, sc.Bytes())))
			continue
		}
		last = max(last, env.GetEventTimeMs())
		add(env.GetEntityKey(), canon)
	}
	for _, in := range inputs {
		add(in.Entity, drive.Marshal(&pb.AgentEnvelope{EntityKey: in.Entity, EventTimeMs: last + 1000,
			Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "end"}}}))
	}
	base, err := support.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ending := replay.Ending{Park: true, EndMs: replay.InputEnd(inputs)}
	baseline, byKey := map[int64][][]byte{records.OutDeadLetter: refused}, map[string][]console.Record{}
	d := &drive.Driver{Core: drive.Core{Agent: base, Deps: host.Deps{AllowUnsigned: true}, OrderResolutionMs: 1, Park: true, EndMs: ending.EndMs}}
	for _, in := range inputs {
		d.Run(context.Background(), in.Entity, in.Values, func(out int64, b []byte) {
			baseline[out] = append(baseline[out], b)
			kind, _ := records.KindOf(out)
			byKey[string(in.Entity)] = append(byKey[string(in.Entity)], console.Record{Kind: kind, Data: b})
		})
	}
	def, err := support.Definition(support.ModelScript)
	if err != nil {
		t.Fatal(err)
	}
	def.Prompt = bindings.DefaultPrompt("You are a terse support agent.")
	candidate, err := bindings.New(def)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rehearse.Run(context.Background(), candidate, inputs, baseline, rehearse.Options{Ending: ending, Refused: refused})
	if err != nil {
		t.Fatal(err)
	}
	return r, byKey
}

// The rehearsal page shows a real rehearsal's report: the summary, then a row per divergent
// key, linked to its entity page when the store has the key's outputs.
func TestRehearsalPage(t *testing.T) {
	report, byKey := supportRehearsal(t)
	if report.Summary.Divergent < 2 {
		t.Fatalf("the rehearsal diverged on %d keys", report.Summary.Divergent)
	}
	st, err := console.Open(filepath.Join(t.TempDir(), "console.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The store has the outputs of every key but the first divergent one.
	var divergent [][]byte
	for _, k := range report.Keys {
		if k.Divergence != nil {
			divergent = append(divergent, k.Entity)
		}
	}
	for key, recs := range byKey {
		if key != string(divergent[0]) {
			if _, _, err := st.Ingest("", console.Offset{}, recs); err != nil {
				t.Fatal(err)
			}
		}
	}
	h, err := console.New(console.Options{Store: st, Hosts: []string{"example.com"}, Rehearsal: report})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/rehearsal", nil))
	body := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("status %d\n%s", w.Code, body)
	}
	s := report.Summary
	for _, want := range []string{
		`<a href="/rehearsal">Rehearsal</a>`,
		strings.Join([]string{strconv.Itoa(s.Keys), " keys rehearsed, <b>", strconv.Itoa(s.Divergent), "</b> divergent"}, ""),
		"Answered from the baseline: " + strconv.Itoa(s.Answered) + " model requests",
		"live: 0 model calls, 0 tokens",
		"<td>model request</td><td class=\"num\">" + strconv.Itoa(s.Divergent) + "</td>",
		"<td>unanswered model call</td>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	for i, key := range divergent {
		link := `<a href="` + console.KeyPath(key) + `">` + string(key) + `</a>`
		if linked := strings.Contains(body, link); linked != (i > 0) || !strings.Contains(body, string(key)) {
			t.Errorf("key %s: linked %v\n%s", key, linked, body)
		}
	}
	if rows := regexp.MustCompile(`(?s)<table id="rehearsal-keys">.*?</table>`).FindString(body); strings.Count(rows, "<tr>") != 1+len(divergent) {
		t.Errorf("want %d rows of divergent keys:\n%s", len(divergent), rows)
	}

	// Without a report there is no page, and no link to it.
	h, _ = console.New(console.Options{Store: st, Hosts: []string{"example.com"}})
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/rehearsal", nil))
	if w.Code != http.StatusNotFound {
		t.Errorf("no report: status %d", w.Code)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if strings.Contains(w.Body.String(), `href="/rehearsal"`) {
		t.Error("the nav links a page that is not there")
	}
}

// Divergent keys are listed effects first, then by kind, then the earliest activation and
// step first, then in the report's order; a kind the console does not know comes last.
func TestRehearsalOrder(t *testing.T) {
	key := func(name string, kind rehearse.Kind, seq int64, step uint32) rehearse.Key {
		return rehearse.Key{Entity: []byte(name), Divergence: &rehearse.Divergence{Kind: kind, Seq: seq, Step: step, Detail: "d-" + name}}
	}
	report := &rehearse.Report{Keys: []rehearse.Key{
		key("k-model", rehearse.KindModelRequest, 0, 0),
		key("k-final", rehearse.KindFinal, 0, 1),
		{Entity: []byte("k-same")},
		key("k-future", "some later kind", 0, 0),
		key("k-tool-late", rehearse.KindTool, 2, 0),
		key("k-state", rehearse.KindState, 1, 0),
		key("k-tool-step", rehearse.KindTool, 1, 3),
		key("k-dead", rehearse.KindDeadLetter, 0, 0),
		key("k-approval", rehearse.KindApproval, 4, 0),
		key("k-tool-early", rehearse.KindTool, 1, 1),
		key("k-tool-early-2", rehearse.KindTool, 1, 1),
	}}
	want := []string{"k-tool-early", "k-tool-early-2", "k-tool-step", "k-tool-late", "k-approval", "k-dead", "k-final", "k-state", "k-model", "k-future"}
	h, err := console.New(console.Options{Approvals: newFixture(t).e.Approvals(), Identity: console.Identity{ApproverHeader: "X-Approver"},
		Hosts: []string{"example.com"}, Rehearsal: report})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/rehearsal", nil))
	got := regexp.MustCompile(`<tr><td>(k-[a-z0-9-]+)</td>`).FindAllStringSubmatch(w.Body.String(), -1)
	var names []string
	for _, m := range got {
		names = append(names, m[1])
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("order %v, want %v\n%s", names, want, w.Body.String())
	}
}
