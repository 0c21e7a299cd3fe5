// Command refunds is an order-refund handler agent in its own module, as a user writes one:
// the agent (agent.go) with an inline read-only lookup, a side-effecting tool and a refund
// that waits for a person's approval, its tools for the effector (tools.go), and this main,
// which gives it every beamagents command. `go run . dev --agent refunds --model openai …`
// runs it with its tools and the console on this machine (docs/dev.md).
package main

import "github.com/beamagents/beamagents/cli"

func main() { cli.Main() }
