package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/internal/consoleserve"
	"github.com/beamagents/beamagents/internal/envelopes"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/rehearse"
)

func init() {
	register(&command{name: "console", summary: "serve a web console over a run's outputs: activations, traces, dead letters with redrive, entities", run: runConsole})
}

// consoleStarted, when set (by tests), is called with the console's URL once it serves, and
// a function that stops it.
var consoleStarted func(url string, stop func())

func runConsole(e *env, args []string) int {
	fs := newFlags(e, "console", "console --db PATH (--outputs DIR | --subscription SUB)... [--rehearsal REPORT] [--listen ADDR] [--approver_header H | --approver_users REF] [--redrive_dir DIR | --redrive_topic TOPIC]")
	db := fs.String("db", "", "the console's store, a bbolt file (created; reopened where it left off)")
	var outputs, subs listFlag
	fs.Var(&outputs, "outputs", "a run's output directory, followed as it grows (repeatable)")
	fs.Var(&subs, "subscription", "a subscription to an output topic, projects/P/subscriptions/S (repeatable)")
	listen := fs.String("listen", "127.0.0.1:8090", "address to serve on; beyond loopback, reading needs an identity too")
	header := fs.String("approver_header", "", "request header carrying the acting user's identity (set by an authenticating proxy)")
	users := fs.String("approver_users", "", "basic-auth users, env:VAR or file:PATH holding user:password lines")
	redriveDir := fs.String("redrive_dir", "", "directory where a redrive writes its envelopes (a new JSON Lines file each time)")
	redriveTopic := fs.String("redrive_topic", "", "input topic a redrive publishes its envelopes to, projects/P/topics/T")
	poll := fs.Duration("poll", time.Second, "how often the output directories are read for new records")
	memoryStore := fs.String("memory_store", "", "the run's long-term memory store, whose entries each entity page lists: a store reference, or env:VAR, file:PATH or gcpsm:… holding one")
	pricesPath := fs.String("prices", "", "price table of the spend page (/spend), the JSON file run --prices takes")
	rehearsal := fs.String("rehearsal", "", "a rehearsal's report, the JSON Lines file rehearse --report wrote, shown on /rehearsal")
	hosts := fs.String("allowed_hosts", "", "comma-separated host names (with or without a port) the console is reached by besides IP addresses and localhost, such as a proxy's; requests for any other name are refused")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	checks := []check{noArgs(fs), required("db", *db, "the console's store, a bbolt file"),
		when(len(outputs)+len(subs) == 0 && *rehearsal == "", func() error {
			return refuseFlag("outputs", "required: a run's output directory, --subscription to an output topic, or --rehearsal")
		}),
		positive("poll", *poll),
		when(*redriveDir != "" && *redriveTopic != "", func() error {
			return refuseFlag("redrive_dir", "and --redrive_topic: choose one")
		}),
		when(*redriveTopic != "", pubsubTopic("redrive_topic", *redriveTopic)),
		memoryStoreRef("memory_store", *memoryStore, true)}
	var prices ledger.Table
	var report *rehearse.Report
	checks = append(checks, when(*pricesPath != "", readPrices("prices", *pricesPath, &prices)),
		when(*rehearsal != "", readRehearsal("rehearsal", *rehearsal, &report)))
	for _, s := range subs {
		checks = append(checks, pubsubSubscription("subscription", s))
	}
	if code, ok := checkFlags(e, checks...); !ok {
		return code
	}
	id, err := consoleserve.Identity(*header, *users)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	opts := console.Options{Identity: id, ReadNeedsIdentity: !consoleserve.Loopback(*listen), Redrive: console.Redrive{Dir: *redriveDir}, Hosts: consoleserve.HostList(*hosts), Prices: prices, Rehearsal: report}
	if opts.ReadNeedsIdentity && !id.Configured() {
		e.errorf("--listen %s is beyond loopback: reading then needs --approver_header or --approver_users", *listen)
		return 2
	}
	ctx, stop := effectorContext()
	defer stop()
	clients := map[string]*pubsub.Client{}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	client := func(project string) (*pubsub.Client, error) {
		if c, ok := clients[project]; ok {
			return c, nil
		}
		c, err := pubsub.NewClient(ctx, project)
		if err == nil {
			clients[project] = c
		}
		return c, err
	}
	var subscribers []*console.Subscriber
	for _, s := range subs {
		name, _ := wire.ParseSubscription(s) // checked above
		c, err := client(name.Project)
		if err != nil {
			e.errorf("%v", err)
			return 1
		}
		subscribers = append(subscribers, &console.Subscriber{Client: c, Subscription: s})
	}
	if *redriveTopic != "" {
		name, _ := wire.ParseTopic(*redriveTopic) // checked above
		c, err := client(name.Project)
		if err != nil {
			e.errorf("%v", err)
			return 1
		}
		opts.Redrive.Publish = envelopes.Publisher(c, *redriveTopic)
	}
	if *memoryStore != "" {
		m, err := backend.OpenRef(ctx, *memoryStore)
		if err != nil {
			e.errorf("--memory_store: %v", err)
			return 1
		}
		defer m.Close()
		opts.Memory = m
	}
	st, err := console.Open(*db)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	defer st.Close()
	opts.Store, opts.Shadow = st, shadowSource(outputs)
	opts.Logger = slog.New(slog.NewTextHandler(e.stderr, nil))
	h, err := console.New(opts)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	// Requests live in the command's context: a page's event stream ends when it stops.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go srv.Serve(l)
	defer consoleserve.Shutdown(srv)
	done := make(chan struct{})
	n := 0
	for _, dir := range outputs {
		f := &console.Follower{Store: st, Dir: dir, Logger: opts.Logger}
		n++
		go func() { f.Follow(ctx, *poll); done <- struct{}{} }()
	}
	for _, s := range subscribers {
		s.Store, s.Logger = st, opts.Logger
		n++
		go func() { s.Run(ctx); done <- struct{}{} }()
	}
	url := "http://" + l.Addr().String() + "/"
	fmt.Fprintf(e.stdout, "console on %s (store %s)\n", url, *db)
	if consoleStarted != nil {
		go consoleStarted(url, stop)
	}
	<-ctx.Done()
	for range n {
		<-done
	}
	return 0
}

// readRehearsal reads a rehearsal's report at launch (rehearse.ReadReport), refusing one that
// cannot be opened or read.
func readRehearsal(n, path string, dst **rehearse.Report) check {
	return func() error {
		f, err := os.Open(path)
		if err != nil {
			return refuseFlag(n, "%v", err)
		}
		defer f.Close()
		if *dst, err = rehearse.ReadReport(f); err != nil {
			return refuseFlag(n, "%s: %v", path, err)
		}
		return nil
	}
}
