// Command beamagents is the runtime's command-line tool with the bundled example agents
// registered (examples/support, the demo's agent, and examples/devices, an agent written as
// Go code: --agent devices): `beamagents help` lists the commands. A binary for your own
// agents is the same few lines with your agent packages imported (see package cli).
package main

import (
	"github.com/beamagents/beamagents/cli"
	_ "github.com/beamagents/beamagents/examples/devices" // registers --agent devices
	"github.com/beamagents/beamagents/examples/support"
)

func main() {
	cli.RegisterDemo(cli.Demo{Agent: support.Name, Envelopes: support.Envelopes})
	cli.Main()
}
