package keysched

// A Call is one call of a keyed step, as the scheduler sees it.
type Call struct {
	// Element is set for an arriving element; otherwise the call is a timer firing with Tag.
	Element bool
	Tag     string
	// Epoch is the bundle running the call.
	Epoch uint64
	// Settle says the call needs the key's state as committed (a restore).
	Settle bool
	// Frozen says the run is frozen: a firing records its key instead of running it.
	Frozen bool
}

// Running is what a Table says of the key's job when a call comes; the zero value is no job.
type Running struct {
	Present bool
	// Done says the job ran its last firing and its effects are ready.
	Done bool
	// Epoch is the bundle that started the job; Await its await timer's tag.
	Epoch uint64
	Await string
	// Exposed says the key's Beam timers were changed in the starting bundle before the job
	// started (the runner then skips the key's later timers they supersede).
	Exposed bool
	// Appended says an element joined the key's buffer while the job ran.
	Appended bool
}

// An Action is what a call does about the key's job.
type Action int

// Actions.
const (
	// Run: no job of the key; the call runs its own step (a firing with due envelopes may
	// start one).
	Run Action = iota
	// Buffer: an element while the job runs joins the buffer (Job.MarkAppended); the job's
	// rewrite of the buffer keeps it.
	Buffer
	// Join: a firing in the job's bundle is queued on the job (Job.Extend) and re-arms the
	// await timer; when the job takes no more firings, the call settles instead.
	Join
	// Leave: the job's own await timer, fired inside its bundle; a later timer call of the
	// key re-arms it, so the call does nothing.
	Leave
	// PassOver: the job's await timer in a later bundle; the bundle may leave the key to the
	// next one (Table.PassOver, re-arming the await timer), or else settles.
	PassOver
	// Settle: wait for the job, carry its effects out, then run the call.
	Settle
	// Freeze: settle the job if any, then record the key instead of running the firing.
	Freeze
)

var actionNames = [...]string{"run", "buffer", "join", "leave", "pass over", "settle", "freeze"}

func (a Action) String() string {
	if a >= 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// Decide answers what call c does about the key's job r. A job that finished is settled by
// any call; a restore settles; an element otherwise only joins the buffer. A firing of a
// later bundle settles, unless it is the job's await timer, which the bundle may pass over.
// In the job's own bundle its await timer is left (unless the key's timers were exposed) and
// any other firing joins the job, unless an element joined the buffer, which the job's copy
// of the state lacks.
func Decide(c Call, r Running) Action {
	switch {
	case c.Frozen && !c.Element:
		return Freeze
	case !r.Present:
		return Run
	case c.Settle || r.Done:
		return Settle
	case c.Element:
		return Buffer
	case r.Epoch != c.Epoch && c.Tag == r.Await:
		return PassOver
	case r.Epoch != c.Epoch:
		return Settle
	case c.Tag == r.Await && !r.Exposed:
		return Leave
	case c.Tag == r.Await:
		return Settle
	case !r.Appended:
		return Join
	}
	return Settle
}
