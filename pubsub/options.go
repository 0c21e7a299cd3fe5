package pubsub

import (
	"time"

	"github.com/beamagents/beamagents/pubsub/wire"
)

// Options configure the Pub/Sub source and sinks. The zero value works.
type Options struct {
	// EventTimeAttribute names an attribute holding the event time (decimal milliseconds
	// since the epoch, or RFC 3339), used when the envelope's event_time_ms is zero. The
	// envelope's event_time_ms wins, then this attribute, then the publish time.
	EventTimeAttribute string
	// EnvelopeIDAttribute names the producer's envelope id attribute, default
	// wire.DefaultEnvelopeIDAttribute; "-" turns it off (message ids only).
	EnvelopeIDAttribute string
	// DedupWindow is how long, in event time after a delivery, a second delivery of it is
	// recognized; default DefaultDedupWindow. DedupMaxIDs bounds the ids kept per entity key
	// (the oldest are forgotten first); default DefaultDedupMaxIDs.
	DedupWindow time.Duration
	DedupMaxIDs int

	// MaxMessages is the most messages one Pull returns; default 1000.
	MaxMessages int
	// PollInterval is how long the reader waits after a Pull found nothing; default 100ms.
	// Pulls return at once (a Pull left waiting and then cancelled by its caller can lose
	// the messages the server handed it until their ack deadline runs out).
	PollInterval time.Duration
	// PullTimeout bounds one Pull call; default 10s.
	PullTimeout time.Duration
	// AckExtension is how far each ack-deadline extension reaches while a bundle holds
	// messages (renewed at half of it); default 60s. MaxHold is when the source gives up
	// extending a bundle that never committed, so Pub/Sub redelivers; default 10 minutes.
	AckExtension, MaxHold time.Duration
	// IdleLag holds the watermark this far behind the event time it extrapolates while the
	// subscription is idle; default 0.
	IdleLag time.Duration
	// StartWatermark is where the watermark starts when the reader has pulled nothing yet:
	// while the subscription stays idle it advances from there at the wall clock's pace.
	// Zero keeps it where it is until the first message. A restarted run sets it to the
	// watermark its previous run drained at, so the envelopes that run left waiting come due
	// without a new message (run --state_dir).
	StartWatermark time.Time

	// Native selects Beam's pubsubio (only Dataflow runs it) instead of this package's
	// reader and publisher.
	Native bool
	// Run is the id of a process-local Run (NewRun) that the source and sinks report to and
	// that can drain the source; empty for none.
	Run string
}

// Defaults.
const (
	DefaultDedupWindow  = time.Hour
	DefaultDedupMaxIDs  = 1000
	DefaultMaxMessages  = 1000
	DefaultPollInterval = 100 * time.Millisecond
	DefaultPullTimeout  = 10 * time.Second
	DefaultAckExtension = 60 * time.Second
	DefaultMaxHold      = 10 * time.Minute
)

func (o Options) envelopeIDAttribute() string {
	switch o.EnvelopeIDAttribute {
	case "":
		return wire.DefaultEnvelopeIDAttribute
	case "-":
		return ""
	}
	return o.EnvelopeIDAttribute
}

func (o Options) resolved() Options {
	if o.DedupWindow <= 0 {
		o.DedupWindow = DefaultDedupWindow
	}
	if o.DedupMaxIDs <= 0 {
		o.DedupMaxIDs = DefaultDedupMaxIDs
	}
	if o.MaxMessages <= 0 {
		o.MaxMessages = DefaultMaxMessages
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.PullTimeout <= 0 {
		o.PullTimeout = DefaultPullTimeout
	}
	if o.AckExtension <= 0 {
		o.AckExtension = DefaultAckExtension
	}
	if o.MaxHold <= 0 {
		o.MaxHold = DefaultMaxHold
	}
	return o
}
