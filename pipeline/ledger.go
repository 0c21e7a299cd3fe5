package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register.DoFn3x1[context.Context, []byte, func([]byte), error](&ledgerFn{})
	register.DoFn2x0[context.Context, []byte](&countLedgerFn{})
	register.DoFn3x0[context.Context, []byte, func(*[]byte) bool](&countLedgerAllFn{})
}

// LedgerName is the stem of the cost ledger's files (ledger.binpb, ledger.jsonl).
const LedgerName = "ledger"

// LedgerType is the message type of the ledger's records.
var LedgerType = (&pb.LedgerEntry{}).ProtoReflect().Descriptor().FullName()

// LedgerOptions add the cost ledger output: one LedgerEntry per model call of a committed
// activation, derived from the trace events (package ledger) and priced by the launch's
// price table (transforms.Options.Prices; a model it does not price costs 0 and is counted in
// ledger.unpriced). The ledger
// is not one of the five outputs of records.Kinds, which every step that runs the agent
// emits: it is a step of its own after them, on the traces, so adding it changes none of
// their bytes, names or transforms.
type LedgerOptions struct {
	// Ledger writes the ledger: ledger.binpb and ledger.jsonl under OutputDir (or its shards),
	// and LedgerTopic when set. A LedgerTopic alone turns it on too.
	Ledger bool
	// LedgerTopic (projects/P/topics/T) publishes the ledger's records.
	LedgerTopic string
}

// buildLedger adds the ledger on the trace events traces and its sinks, when the options ask
// for it.
func (o Options) buildLedger(s beam.Scope, traces beam.PCollection, bounded bool) error {
	if !o.Ledger && o.LedgerTopic == "" {
		return nil
	}
	s = s.Scope("Ledger")
	entries := beam.ParDo(s, &ledgerFn{Prices: o.Prices}, traces)
	countLedger(s, entries, bounded)
	switch {
	case o.OutputDir == "":
	case o.Shards > 0:
		WriteShards(s, o.OutputDir, LedgerName, LedgerType, entries, o.Shards, o.Window)
	default:
		WriteRecords(s, o.OutputDir, LedgerName, LedgerType, entries)
	}
	if o.LedgerTopic != "" {
		return pubsub.Publish(s, o.LedgerTopic, LedgerType, entries, o.PubSub)
	}
	return nil
}

// ledgerFn turns each binary TraceEvent of a model call into its binary LedgerEntry
// (ledger.Entry); every other event gives none.
type ledgerFn struct {
	Prices ledger.Table
}

func (f *ledgerFn) ProcessElement(_ context.Context, rec []byte, emit func([]byte)) error {
	ev := &pb.TraceEvent{}
	if err := proto.Unmarshal(rec, ev); err != nil {
		return err // the traces are the runtime's own: a record that does not decode is a bug
	}
	e, ok := ledger.Entry(ev, f.Prices)
	if !ok {
		return nil
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(e)
	if err != nil {
		return err
	}
	emit(b)
	return nil
}

// countLedger counts the ledger's records in counters of the beamagents namespace
// (ledger.calls, ledger.cache_hits, ledger.unpriced, ledger.input_tokens,
// ledger.cached_input_tokens, ledger.output_tokens, ledger.cost_micros), once whole when bounded, as CountRecords does
// and for the same reason, else record by record.
func countLedger(s beam.Scope, entries beam.PCollection, bounded bool) {
	s = s.Scope("CountLedger")
	if bounded {
		beam.ParDo0(s, &countLedgerAllFn{}, beam.Impulse(s), beam.SideInput{Input: entries})
		return
	}
	beam.ParDo0(s, &countLedgerFn{}, entries)
}

type countLedgerFn struct{}

func (f *countLedgerFn) ProcessElement(ctx context.Context, rec []byte) {
	var t ledger.Totals
	addEntry(&t, rec)
	incLedger(ctx, t)
}

type countLedgerAllFn struct{}

func (f *countLedgerAllFn) ProcessElement(ctx context.Context, _ []byte, entries func(*[]byte) bool) {
	var t ledger.Totals
	var rec []byte
	for entries(&rec) {
		addEntry(&t, rec)
	}
	incLedger(ctx, t)
}

func addEntry(t *ledger.Totals, rec []byte) {
	e := &pb.LedgerEntry{}
	if proto.Unmarshal(rec, e) == nil {
		t.Add(e)
	}
}

func incLedger(ctx context.Context, t ledger.Totals) {
	for name, n := range map[string]int64{"ledger.calls": t.Calls, "ledger.cache_hits": t.CacheHits, "ledger.unpriced": t.Unpriced,
		"ledger.input_tokens": t.InputTokens, "ledger.cached_input_tokens": t.CachedInputTokens, "ledger.output_tokens": t.OutputTokens,
		"ledger.cost_micros": t.Cost} {
		beam.NewCounter(transforms.MetricsNamespace, name).Inc(ctx, n)
	}
}
