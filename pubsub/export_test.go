package pubsub

import (
	"time"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
)

// Acker exposes the acker to the external tests.
type Acker = acker

func NewAcker(c *vkit.SubscriptionAdminClient, sub string, ext, maxHold, stale time.Duration) *Acker {
	return newAcker(c, sub, ext, maxHold, stale)
}

func (a *Acker) Hold(ids []string) { a.hold(ids) }
func (a *Acker) Close()            { a.close() }
