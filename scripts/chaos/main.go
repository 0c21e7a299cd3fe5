// Command chaos is the binary scripts/chaos.sh runs: beamagents' command line (cli.Main)
// with one more agent, "chaos" (the support agent's definition under another name, its model
// a script generated for the run, its orders.lookup tool appending each effect's intent id to
// the file $CHAOS_EFFECTS, synced before the tool returns), and three helper commands:
//
//	chaos chaos-script --n N --out FILE     the model script: N customers, each a lookup then a reply
//	chaos chaos-publish --n N --topic T     N customer events, published at a steady pace
//	chaos chaos-audit --n N --effects FILE  what reached the audit subscriptions, the last line a summary
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/cli"
	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/examples/support"
)

// Name is the chaos agent's name.
const Name = "chaos"

func init() {
	agent.Register(Name, func(config []byte) (*agent.Agent, error) {
		path := os.Getenv("CHAOS_SCRIPT")
		if path == "" {
			return nil, errors.New("chaos agent: CHAOS_SCRIPT names no model script")
		}
		script, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		def, err := support.Definition(script)
		if err != nil {
			return nil, err
		}
		def.Name = Name
		return bindings.New(def)
	})
	tool.RegisterAgentTools(Name, tools)
}

// tools are the support agent's, orders.lookup counting its effects.
func tools() ([]tool.Tool, error) {
	ts, err := support.Tools()
	if err != nil {
		return nil, err
	}
	for i, t := range ts {
		if t.Name() == support.ToolLookupOrder {
			ts[i] = tool.WithAgreement(counted{t}, tool.AgreementOf(t))
		}
	}
	return ts, nil
}

// counted logs each effect of the tool it wraps before running it.
type counted struct{ tool.Tool }

func (c counted) Invoke(ctx context.Context, call tool.Call) ([]byte, error) {
	if err := recordEffect(call.IntentID); err != nil {
		return nil, err
	}
	return c.Tool.Invoke(ctx, call)
}

var effects struct {
	mu sync.Mutex
	f  *os.File
}

// recordEffect appends one effect to $CHAOS_EFFECTS and syncs it: the effect has happened
// once this returns, whatever happens to the process next.
func recordEffect(intentID string) error {
	effects.mu.Lock()
	defer effects.mu.Unlock()
	if effects.f == nil {
		f, err := os.OpenFile(os.Getenv("CHAOS_EFFECTS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		effects.f = f
	}
	if _, err := effects.f.WriteString(intentID + "\n"); err != nil {
		return err
	}
	return effects.f.Sync()
}

func main() {
	if len(os.Args) > 1 {
		var err error
		switch os.Args[1] {
		case "chaos-script":
			err = writeScript(os.Args[2:])
		case "chaos-publish":
			err = publish(os.Args[2:])
		case "chaos-audit":
			err = audit(os.Args[2:])
		default:
			cli.Main()
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
			os.Exit(1)
		}
		return
	}
	cli.Main()
}

func customer(i int) string { return fmt.Sprintf("chaos-customer-%05d", i) }

func writeScript(args []string) error {
	fs := flag.NewFlagSet("chaos-script", flag.ContinueOnError)
	n := fs.Int("n", 300, "customers")
	out := fs.String("out", "", "the script file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	for i := range *n {
		fmt.Fprintf(f, `{"entity":%q,"seq":0,"step":0,"response":{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":"A-1001"}},"input_tokens":10,"output_tokens":5}`+"\n", customer(i))
		fmt.Fprintf(f, `{"entity":%q,"seq":0,"step":1,"response":{"case":"support.reply","fields":{"support.reply.text":"Order A-1001 ships on Thursday."}},"input_tokens":12,"output_tokens":6}`+"\n", customer(i))
	}
	return f.Sync()
}
