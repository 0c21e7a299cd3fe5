package pubsub

import (
	"context"
	"sync"
	"time"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
)

// maxAckIDs is the most ack ids one Acknowledge or ModifyAckDeadline request carries.
const maxAckIDs = 2500

// acker holds the ack ids of pulled messages until the bundle that emitted them commits,
// extending their ack deadlines meanwhile, so Pub/Sub neither redelivers a message a bundle
// still holds nor loses one a crashed bundle held: a hold that is never acknowledged stops
// being extended after maxHold, and Pub/Sub redelivers its messages.
type acker struct {
	sub     string
	client  *vkit.SubscriptionAdminClient
	ext     time.Duration
	maxHold time.Duration

	mu   sync.Mutex
	held map[string]*hold // by first ack id
	// alive is when the reader last ran; a reader that stopped running (its worker is gone,
	// or the job was cancelled in this process) must not keep its messages: its holds are
	// dropped after staleAfter and Pub/Sub redelivers them.
	alive      time.Time
	staleAfter time.Duration
	recent     [64]string // first ack ids of the pulls acknowledged last
	nrecent    int
	acks       chan []string
	stop       chan struct{}
	done       chan struct{}
}

// ackTimeout bounds one acknowledgement (the client retries transient errors within it).
const ackTimeout = 10 * time.Second

type hold struct {
	ids             []string
	since, extended time.Time
}

func newAcker(client *vkit.SubscriptionAdminClient, sub string, ext, maxHold, staleAfter time.Duration) *acker {
	a := &acker{sub: sub, client: client, ext: ext, maxHold: maxHold, held: map[string]*hold{},
		alive: time.Now(), staleAfter: staleAfter, acks: make(chan []string, 1024),
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.loop()
	return a
}

func (a *acker) ackLogged(ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	if err := a.ack(ctx, ids); err != nil {
		// Not fatal: the hold lapses, Pub/Sub redelivers and dedup drops the second copy.
		log.Warnf(ctx, "pubsub: acknowledging %d messages of %s: %v", len(ids), a.sub, err)
	}
}

// touch records that the reader runs.
func (a *acker) touch() {
	a.mu.Lock()
	a.alive = time.Now()
	a.mu.Unlock()
}

// hold starts holding ids (one pull's, not empty).
func (a *acker) hold(ids []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	a.held[ids[0]] = &hold{ids: ids, since: now, extended: now}
}

// ackAsync queues ack for the loop, so the reader never waits for Pub/Sub to answer.
func (a *acker) ackAsync(ids []string) {
	if len(ids) > 0 {
		a.acks <- ids
	}
}

// ack acknowledges one pull's ids and stops holding them. Acknowledging twice (once from the
// resumed restriction, once from the bundle finalization) is harmless; a hold this acker does
// not have (another worker pulled the messages) is acknowledged all the same. On an error the
// hold stays, until it lapses.
func (a *acker) ack(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	a.mu.Lock()
	hd := a.held[ids[0]]
	a.mu.Unlock()
	if hd == nil && a.acked(ids[0]) {
		return nil
	}
	for c := range chunks(ids) {
		if err := a.client.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: a.sub, AckIds: c}); err != nil {
			return err
		}
	}
	a.mu.Lock()
	delete(a.held, ids[0])
	a.recent[a.nrecent%len(a.recent)] = ids[0]
	a.nrecent++
	a.mu.Unlock()
	return nil
}

// acked reports whether the pull starting with id was acknowledged recently, so the second
// of the two acknowledgements is skipped.
func (a *acker) acked(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.recent {
		if r == id {
			return true
		}
	}
	return false
}

// period is how often the loop looks at the holds: often enough to extend before the
// shortest ack deadline Pub/Sub allows (10 s) runs out.
func (a *acker) period() time.Duration { return min(a.ext/2, 2*time.Second) }

func (a *acker) loop() {
	defer close(a.done)
	t := time.NewTicker(a.period())
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			for {
				select {
				case ids := <-a.acks:
					a.ackLogged(ids)
				default:
					return
				}
			}
		case ids := <-a.acks:
			a.ackLogged(ids)
		case now := <-t.C:
			a.extend(now)
		}
	}
}

// extend renews the deadline of every hold last extended a period ago or more (the first
// renewal comes within one period of the pull). It drops holds older than maxHold (Pub/Sub
// redelivers them when their deadline runs out) and, once the reader has stopped running,
// releases every hold at once (a zero deadline: redelivered now).
func (a *acker) extend(now time.Time) {
	var due, release []string
	a.mu.Lock()
	stale := now.Sub(a.alive) > a.staleAfter
	for h, hd := range a.held {
		switch {
		case stale:
			delete(a.held, h)
			release = append(release, hd.ids...)
		case now.Sub(hd.since) > a.maxHold:
			delete(a.held, h)
		case hd.extended == hd.since || now.Sub(hd.extended) >= a.ext/2:
			hd.extended = now
			due = append(due, hd.ids...)
		}
	}
	a.mu.Unlock()
	a.modify(due, a.ext)
	a.modify(release, 0)
}

// modify sets the ack deadline of ids. A failure is not fatal: at worst Pub/Sub redelivers,
// and dedup drops the second delivery.
func (a *acker) modify(ids []string, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), a.period())
	defer cancel()
	for c := range chunks(ids) {
		a.client.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{
			Subscription: a.sub, AckIds: c, AckDeadlineSeconds: int32(d / time.Second)})
	}
}

// close stops the loop and releases what is still held.
func (a *acker) close() {
	close(a.stop)
	<-a.done
	a.mu.Lock()
	var release []string
	for _, hd := range a.held {
		release = append(release, hd.ids...)
	}
	a.held = map[string]*hold{}
	a.mu.Unlock()
	a.modify(release, 0)
}

func chunks(ids []string) func(func([]string) bool) {
	return func(yield func([]string) bool) {
		for len(ids) > 0 {
			n := min(len(ids), maxAckIDs)
			if !yield(ids[:n]) {
				return
			}
			ids = ids[n:]
		}
	}
}
