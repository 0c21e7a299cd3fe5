package cli

// Demo names the agent and the envelopes (JSON Lines) that `beamagents demo` runs.
type Demo struct {
	Agent     string
	Envelopes []byte
}

var demo Demo

// RegisterDemo sets what `beamagents demo` runs. A binary registers at most one demo.
func RegisterDemo(d Demo) { demo = d }
