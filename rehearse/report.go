package rehearse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Kind is what a key's first divergence is about.
type Kind string

// Kinds of divergence.
const (
	KindModelRequest Kind = "model request"      // a request the baseline did not make
	KindTool         Kind = "tool and arguments" // a tool intent or inline tool run
	KindApproval     Kind = "approval"           // an APPROVAL intent
	KindFinal        Kind = "final text"         // a final reply
	KindDeadLetter   Kind = "dead-letter reason" // a dead letter
	KindState        Kind = "state"              // an exported or parked snapshot
)

// Stop is why a key's rehearsal stopped before the end of its traffic.
type Stop string

// Reasons to stop.
const (
	StopUnanswered Stop = "unanswered model call" // a new request and no live call left
	StopNewEffect  Stop = "new effect"            // a tool call the baseline did not make
)

// Divergence is a key's first divergence from the baseline.
type Divergence struct {
	Kind Kind `json:"kind"`
	// Seq and Step place it: the activation and its step (a dead letter names neither: 0).
	Seq  int64  `json:"seq"`
	Step uint32 `json:"step"`
	// Missing says the divergence is a baseline output the candidate did not produce; else it
	// is something the candidate did that the baseline did not.
	Missing bool   `json:"missing,omitempty"`
	Detail  string `json:"detail"`
}

func (d Divergence) String() string {
	s := fmt.Sprintf("%s at seq %d step %d", d.Kind, d.Seq, d.Step)
	if d.Missing {
		s += " (not produced)"
	}
	return s + ": " + d.Detail
}

// Key is one key's rehearsal.
type Key struct {
	Entity []byte `json:"entity"`
	// Divergence is the first divergence; nil when the key behaved exactly as in the baseline.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Stop says why the key stopped early; empty when it ran to the end of its traffic.
	Stop Stop `json:"stop,omitempty"`
	// Answered counts model requests answered from the baseline's caches, Inlined inline tool
	// runs answered from its record; LiveCalls and LiveTokens what the live model was asked.
	Answered   int   `json:"answered"`
	Inlined    int   `json:"inlined"`
	LiveCalls  int   `json:"live_calls"`
	LiveTokens int64 `json:"live_tokens"`
	// NewTools are tools the candidate called and the baseline did not, for this key;
	// DroppedTools the reverse (left empty for a stopped key).
	NewTools     []string `json:"new_tools,omitempty"`
	DroppedTools []string `json:"dropped_tools,omitempty"`
	// Produced counts the candidate's outputs up to its stop by kind (the files' stems:
	// intents, traces, finals, snapshots, dead_letters).
	Produced map[string]int `json:"produced,omitempty"`
}

// Summary is the whole rehearsal's account.
type Summary struct {
	Keys      int          `json:"keys"`
	Divergent int          `json:"divergent"`
	ByKind    map[Kind]int `json:"by_kind,omitempty"` // first divergences by kind
	Stopped   map[Stop]int `json:"stopped,omitempty"` // stopped keys by reason
	Answered  int          `json:"answered"`
	Inlined   int          `json:"inlined"`
	// LiveCalls and LiveTokens are what the live model was asked, over every key.
	LiveCalls  int   `json:"live_calls"`
	LiveTokens int64 `json:"live_tokens"`
	// NewTools and DroppedTools are the union of the keys'.
	NewTools     []string `json:"new_tools,omitempty"`
	DroppedTools []string `json:"dropped_tools,omitempty"`
}

// Report is a rehearsal's result: a record per key, in input order, and the summary.
type Report struct {
	Keys    []Key
	Summary Summary
}

// line is one line of a report's JSON Lines form: exactly one member set.
type line struct {
	Key     *Key     `json:"key,omitempty"`
	Summary *Summary `json:"summary,omitempty"`
}

// WriteJSONL writes r as JSON Lines: one {"key": …} line per key, then one {"summary": …}.
func (r *Report) WriteJSONL(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range r.Keys {
		if err := enc.Encode(line{Key: &r.Keys[i]}); err != nil {
			return err
		}
	}
	if err := enc.Encode(line{Summary: &r.Summary}); err != nil {
		return err
	}
	return bw.Flush()
}

// maxLine bounds one line of a report read back.
const maxLine = 1 << 20

// ReadReport reads a report WriteJSONL wrote. It is strict: every line is exactly one known
// record with known members, and the summary comes last, once. Errors are ErrReport.
func ReadReport(rd io.Reader) (*Report, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(nil, maxLine)
	r := &Report{}
	summary := false
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		bad := func(format string, a ...any) error {
			return &Error{Code: CodeReport, Detail: fmt.Sprintf("line %d: ", n) + fmt.Sprintf(format, a...)}
		}
		if summary {
			return nil, bad("a record after the summary")
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, &Error{Code: CodeReport, Detail: fmt.Sprintf("line %d", n), Err: err}
		}
		if dec.More() {
			return nil, bad("data after the record")
		}
		switch {
		case (l.Key == nil) == (l.Summary == nil):
			return nil, bad("want exactly one of key and summary")
		case l.Key != nil:
			r.Keys = append(r.Keys, *l.Key)
		default:
			r.Summary, summary = *l.Summary, true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{Code: CodeReport, Detail: "reading", Err: err}
	}
	if !summary {
		return nil, &Error{Code: CodeReport, Detail: "no summary line"}
	}
	return r, nil
}

// Percent is the share of divergent keys, 0 to 100 (0 without keys).
func (s Summary) Percent() float64 {
	if s.Keys == 0 {
		return 0
	}
	return float64(s.Divergent) * 100 / float64(s.Keys)
}

// Thresholds gate a release: a rehearsal is over them when more keys diverge than MaxKeys or
// a larger share than MaxPercent. A negative value sets no bound.
type Thresholds struct {
	MaxKeys    int
	MaxPercent float64
}

// ErrThresholds is returned by Over for a rehearsal over its thresholds.
var ErrThresholds = errors.New("rehearse: over the divergence thresholds")

// Over reports, as an error wrapping ErrThresholds, which threshold s exceeds; nil when none.
func (s Summary) Over(t Thresholds) error {
	if t.MaxKeys >= 0 && s.Divergent > t.MaxKeys {
		return fmt.Errorf("%w: %d divergent keys, at most %d allowed", ErrThresholds, s.Divergent, t.MaxKeys)
	}
	if t.MaxPercent >= 0 && s.Percent() > t.MaxPercent {
		return fmt.Errorf("%w: %.1f%% of keys diverged, at most %g%% allowed", ErrThresholds, s.Percent(), t.MaxPercent)
	}
	return nil
}

// WriteText writes the human summary: the account, then one line per divergent key.
func (r *Report) WriteText(w io.Writer) error {
	s := r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "rehearsed %d keys: %d diverged (%.1f%%)", s.Keys, s.Divergent, s.Percent())
	if len(s.ByKind) > 0 {
		fmt.Fprintf(&b, "; first divergence by kind: %s", counts(s.ByKind))
	}
	if len(s.Stopped) > 0 {
		fmt.Fprintf(&b, "; stopped: %s", counts(s.Stopped))
	}
	fmt.Fprintf(&b, "\nfrom the baseline: %d model requests, %d inline tool runs; live: %d calls, %d tokens\n",
		s.Answered, s.Inlined, s.LiveCalls, s.LiveTokens)
	fmt.Fprintf(&b, "tools newly called: %s; no longer called: %s\n", list(s.NewTools), list(s.DroppedTools))
	for _, k := range r.Keys {
		if k.Divergence == nil {
			continue
		}
		fmt.Fprintf(&b, "key %q: %s", k.Entity, k.Divergence)
		if k.Stop != "" {
			fmt.Fprintf(&b, " [stopped: %s]", k.Stop)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// counts renders a count map as "a 2, b 1", in name order.
func counts[K ~string](m map[K]int) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// summarize totals the keys' records.
func summarize(keys []Key) Summary {
	s := Summary{Keys: len(keys), ByKind: map[Kind]int{}, Stopped: map[Stop]int{}}
	newTools, dropped := map[string]bool{}, map[string]bool{}
	for _, k := range keys {
		if k.Divergence != nil {
			s.Divergent++
			s.ByKind[k.Divergence.Kind]++
		}
		if k.Stop != "" {
			s.Stopped[k.Stop]++
		}
		s.Answered += k.Answered
		s.Inlined += k.Inlined
		s.LiveCalls += k.LiveCalls
		s.LiveTokens += k.LiveTokens
		for _, t := range k.NewTools {
			newTools[t] = true
		}
		for _, t := range k.DroppedTools {
			dropped[t] = true
		}
	}
	s.NewTools = slices.Sorted(maps.Keys(newTools))
	s.DroppedTools = slices.Sorted(maps.Keys(dropped))
	return s
}
