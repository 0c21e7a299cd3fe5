package keysched

import "testing"

// TestDecide is the scheduler's specification: one row per case of a call meeting the key's
// job.
func TestDecide(t *testing.T) {
	const bundle, later = 7, 8
	job := Running{Present: true, Epoch: bundle, Await: "await:3"}
	with := func(f func(*Running)) Running { r := job; f(&r); return r }
	done := with(func(r *Running) { r.Done = true })
	exposed := with(func(r *Running) { r.Exposed = true })
	appended := with(func(r *Running) { r.Appended = true })

	element := Call{Element: true, Epoch: bundle}
	restore := Call{Element: true, Settle: true, Epoch: bundle}
	timer := func(tag string, epoch uint64) Call { return Call{Tag: tag, Epoch: epoch} }

	for _, tc := range []struct {
		name string
		call Call
		job  Running
		want Action
	}{
		{"an element of a key without a job runs", element, Running{}, Run},
		{"a firing of a key without a job runs", timer("order:1000", bundle), Running{}, Run},
		{"a restore without a job runs", restore, Running{}, Run},
		{"an element while the job runs joins the buffer", element, job, Buffer},
		{"an element of a later bundle while the job runs joins the buffer", Call{Element: true, Epoch: later}, job, Buffer},
		{"a restore waits for the job", restore, job, Settle},
		{"an element after the job finished settles it", element, done, Settle},
		{"a firing after the job finished settles it", timer("ttl", bundle), done, Settle},
		{"the await timer after the job finished settles it", timer("await:3", later), done, Settle},
		{"a firing in the job's bundle joins it", timer("order:2000", bundle), job, Join},
		{"a firing in the job's bundle after an element joined the buffer settles", timer("order:2000", bundle), appended, Settle},
		{"the await timer in the job's bundle is left", timer("await:3", bundle), job, Leave},
		{"the await timer in the job's bundle settles when the key's timers were exposed", timer("await:3", bundle), exposed, Settle},
		{"the await timer in the job's bundle is left even after an element joined", timer("await:3", bundle), appended, Leave},
		{"the await timer in a later bundle may be passed over", timer("await:3", later), job, PassOver},
		{"another job's await tag in a later bundle settles", timer("await:9", later), job, Settle},
		{"another firing in a later bundle settles", timer("deadline", later), job, Settle},
		{"a frozen firing without a job freezes", Call{Tag: "ttl", Frozen: true}, Running{}, Freeze},
		{"a frozen firing with a job running freezes (settling it)", Call{Tag: "await:3", Epoch: bundle, Frozen: true}, job, Freeze},
		{"an element of a frozen run is buffered as usual", Call{Element: true, Epoch: bundle, Frozen: true}, job, Buffer},
		{"an element of a frozen run without a job runs", Call{Element: true, Frozen: true}, Running{}, Run},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.call, tc.job); got != tc.want {
				t.Errorf("Decide(%+v, %+v) = %v, want %v", tc.call, tc.job, got, tc.want)
			}
		})
	}
}

func TestActionNames(t *testing.T) {
	seen := map[string]bool{}
	for a := Run; a <= Freeze; a++ {
		if n := a.String(); n == "unknown" || seen[n] {
			t.Errorf("action %d is named %q", a, n)
		} else {
			seen[n] = true
		}
	}
	if Action(99).String() != "unknown" {
		t.Error("an action out of range has a name")
	}
}
