package pubsub

import (
	"context"
	"sync"
	"time"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
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
	held map[uint64]*hold
	next uint64
	stop chan struct{}
	done chan struct{}
}

type hold struct {
	ids            []string
	since, extended time.Time
}

func newAcker(client *vkit.SubscriptionAdminClient, sub string, ext, maxHold time.Duration) *acker {
	a := &acker{sub: sub, client: client, ext: ext, maxHold: maxHold, held: map[uint64]*hold{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.loop()
	return a
}

// hold starts holding ids and returns the handle that ack takes.
func (a *acker) hold(ids []string) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	now := time.Now()
	a.held[a.next] = &hold{ids: ids, since: now, extended: now}
	return a.next
}

// ack acknowledges a hold's messages. A failed request is returned (the runner may retry the
// finalization); the hold is kept until it succeeds.
func (a *acker) ack(ctx context.Context, h uint64) error {
	a.mu.Lock()
	hd := a.held[h]
	a.mu.Unlock()
	if hd == nil {
		return nil
	}
	for ids := range chunks(hd.ids) {
		if err := a.client.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: a.sub, AckIds: ids}); err != nil {
			return err
		}
	}
	a.mu.Lock()
	delete(a.held, h)
	a.mu.Unlock()
	return nil
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
			return
		case now := <-t.C:
			a.extend(now)
		}
	}
}

// extend renews the deadline of every hold last extended a period ago or more (the first
// renewal comes within one period of the pull), and drops holds older than maxHold.
func (a *acker) extend(now time.Time) {
	var due []string
	a.mu.Lock()
	for h, hd := range a.held {
		switch {
		case now.Sub(hd.since) > a.maxHold:
			delete(a.held, h)
		case hd.extended == hd.since || now.Sub(hd.extended) >= a.ext/2:
			hd.extended = now
			due = append(due, hd.ids...)
		}
	}
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), a.period())
	defer cancel()
	for ids := range chunks(due) {
		// A failed extension is not fatal: at worst Pub/Sub redelivers, and dedup drops it.
		a.client.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{
			Subscription: a.sub, AckIds: ids, AckDeadlineSeconds: int32(a.ext / time.Second)})
	}
}

func (a *acker) close() {
	close(a.stop)
	<-a.done
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
