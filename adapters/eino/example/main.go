// Command example is the devices agent written with CloudWeGo Eino, registered as
// devices-eino, with every beamagents command (run, replay, demo, inspect, …): the same
// tools, behaviour and outputs as the native devices agent, its model loop an Eino ReAct
// agent whose chat model and tools are answered by the runtime.
package main

import "github.com/beamagents/beamagents/cli"

func main() { cli.Main() }
