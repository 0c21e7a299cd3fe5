package cli

import "github.com/beamagents/beamagents/examples/support"

// The tests run the bundled example agent, as cmd/beamagents does.
func init() {
	RegisterDemo(Demo{Agent: support.Name, Envelopes: support.Envelopes})
}
