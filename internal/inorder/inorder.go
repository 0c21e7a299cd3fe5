package inorder

import (
	"fmt"
	"runtime/debug"
)

// chunk is how many values a job hands over at once: one channel operation per chunk.
const chunk = 64

// Runner runs jobs that yield values of type T. The zero value is not usable; see New.
type Runner[T any] struct {
	workers int
	depth   int           // chunks a job's channel holds
	stop    chan struct{} // closed when the runner fails or is stopped
	queue   []*job[T]     // submitted, not fully delivered, oldest first
	err     error
}

type job[T any] struct {
	out   chan []T
	panic *PanicError // set before out is closed
}

// New returns a runner of at most workers jobs at once (at least 1), each holding at most
// about buffer undelivered values (at least one chunk of 64).
func New[T any](workers, buffer int) *Runner[T] {
	workers = max(workers, 1)
	return &Runner[T]{workers: workers, depth: max(buffer/chunk, 1), stop: make(chan struct{})}
}

// Go submits run, which yields its values through yield (false once the runner has stopped:
// the job should return). It first delivers what is ready, and waits for the oldest job to
// be delivered whole while workers jobs are pending.
func (r *Runner[T]) Go(run func(yield func(T) bool), deliver func(T)) error {
	if err := r.Poll(deliver); err != nil {
		return err
	}
	for len(r.queue) >= r.workers {
		if err := r.drainOldest(deliver); err != nil {
			return err
		}
	}
	j := &job[T]{out: make(chan []T, r.depth)}
	r.queue = append(r.queue, j)
	go r.run(j, run)
	return nil
}

func (r *Runner[T]) run(j *job[T], run func(yield func(T) bool)) {
	defer close(j.out)
	buf := make([]T, 0, chunk)
	send := func() bool {
		select {
		case j.out <- buf:
			buf = make([]T, 0, chunk)
			return true
		case <-r.stop:
			buf = buf[:0]
			return false
		}
	}
	defer func() {
		if v := recover(); v != nil {
			j.panic = &PanicError{Value: v, Stack: debug.Stack()}
		}
		if len(buf) > 0 {
			send()
		}
	}()
	run(func(v T) bool {
		select {
		case <-r.stop:
			return false
		default:
		}
		buf = append(buf, v)
		return len(buf) < chunk || send()
	})
}

// Poll delivers, without waiting, what the oldest jobs have handed over.
func (r *Runner[T]) Poll(deliver func(T)) error {
	for r.err == nil && len(r.queue) > 0 {
		select {
		case c, ok := <-r.queue[0].out:
			if !ok {
				r.finishOldest()
				continue
			}
			deliverAll(c, deliver)
			continue
		default:
		}
		break
	}
	return r.err
}

// Wait delivers everything every submitted job yields, waiting for each to finish.
func (r *Runner[T]) Wait(deliver func(T)) error {
	for r.err == nil && len(r.queue) > 0 {
		r.drainOldest(deliver)
	}
	return r.err
}

// Stop abandons the jobs not yet delivered: their yields return false and nothing more is
// delivered. A runner that failed is already stopped; Stop may be called more than once.
func (r *Runner[T]) Stop() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.queue = nil
}

func (r *Runner[T]) drainOldest(deliver func(T)) error {
	for c := range r.queue[0].out {
		deliverAll(c, deliver)
	}
	r.finishOldest()
	return r.err
}

// finishOldest retires the oldest job, whose channel is closed, and fails the runner if it
// panicked.
func (r *Runner[T]) finishOldest() {
	j := r.queue[0]
	r.queue[0] = nil
	r.queue = r.queue[1:]
	if j.panic != nil {
		r.err = j.panic
		r.Stop()
	}
}

func deliverAll[T any](c []T, deliver func(T)) {
	for _, v := range c {
		deliver(v)
	}
}

// PanicError is a job's panic, returned on the caller's goroutine.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("a job panicked: %v\n%s", e.Value, e.Stack) }

// Unwrap returns the panic's value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
