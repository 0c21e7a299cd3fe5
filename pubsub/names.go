package pubsub

import "github.com/beamagents/beamagents/pubsub/wire"

// Name is a parsed full resource name: projects/Project/{subscriptions|topics}/ID.
type Name = wire.Name

// ParseSubscription parses projects/P/subscriptions/S; anything else is CodeBadName.
func ParseSubscription(s string) (Name, error) { return badName(wire.ParseSubscription(s)) }

// ParseTopic parses projects/P/topics/T; anything else is CodeBadName.
func ParseTopic(s string) (Name, error) { return badName(wire.ParseTopic(s)) }

func badName(n Name, err error) (Name, error) {
	if err != nil {
		return n, &Error{Code: CodeBadName, Err: err}
	}
	return n, nil
}
