package devloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"

	"github.com/beamagents/beamagents/console"
)

// mark is how far --follow read its file (follow.json in the state directory).
type mark struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
}

// sent is one published line: its key, its result, and the offset after it.
type sent struct {
	key []byte
	res *pubsub.PublishResult
	end int64
}

// follow reads path as it grows, each complete line an event ({"key":…,"body":…}, the JSON
// API's), and ingests it. How far it read is kept in state (follow.json): a restart goes on
// from there; a file that became shorter (replaced) is read from its start.
func follow(ctx context.Context, errorf func(string, ...any), in *ingest, path, state string) {
	var at mark
	if b, err := os.ReadFile(state); err == nil && json.Unmarshal(b, &at) == nil && at.Path == path {
	} else {
		at = mark{Path: path}
	}
	for ctx.Err() == nil {
		b, err := os.ReadFile(path)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			errorf("--follow: %v", unwrapPath(err))
		case int64(len(b)) < at.Offset:
			at.Offset = 0
		}
		// Every complete line read is published at once, then waited for: the read position
		// moves past the lines accepted in order, up to the first that was not (which is read
		// again next time).
		var batch []sent
		if err == nil {
			batch = publishLines(ctx, errorf, in, path, b, &at)
		}
		for _, s := range batch {
			if err := in.wait(ctx, s.key, s.res); err != nil {
				errorf("--follow: %v", err)
				break
			}
			at.Offset = s.end
		}
		saveMark(state, at)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// publishLines publishes the complete lines of b after at's offset, without waiting; it
// moves at past the lines passed over before the first one published.
func publishLines(ctx context.Context, errorf func(string, ...any), in *ingest, path string, b []byte, at *mark) []sent {
	var batch []sent
	for off := at.Offset; ctx.Err() == nil; {
		rest := b[off:]
		nl := slices.Index(rest, '\n')
		if nl < 0 {
			break
		}
		text := strings.TrimSpace(string(rest[:nl]))
		end := off + int64(nl) + 1
		if text != "" {
			var ev console.APIEvent
			dec := json.NewDecoder(strings.NewReader(text))
			dec.DisallowUnknownFields()
			key, body, derr := []byte(nil), []byte(nil), dec.Decode(&ev)
			if derr == nil {
				key, body, derr = ev.Decode()
			}
			if derr != nil {
				errorf("--follow %s: a line at byte %d is not an event ({\"key\":…,\"body\":…}): %v; passed over", path, off, derr)
			} else {
				_, res, perr := in.publish(ctx, key, body)
				if perr != nil {
					errorf("--follow: %v", perr)
					break
				}
				batch = append(batch, sent{key: key, res: res})
			}
		}
		off = end
		if len(batch) > 0 {
			batch[len(batch)-1].end = end
		} else {
			at.Offset = end // lines passed over before any publish
		}
	}
	return batch
}

func saveMark(state string, at mark) {
	b, _ := json.Marshal(at)
	if os.WriteFile(state+".tmp", b, 0o600) == nil {
		os.Rename(state+".tmp", state)
	}
}

// unwrapPath is a path error without its operation: the path and the cause.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
