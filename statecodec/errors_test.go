package statecodec_test

import (
	"errors"
	"strings"
	"testing"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/statecodec"
)

func TestErrorsMatchByCodeAndCell(t *testing.T) {
	err := error(&statecodec.Error{Code: statecodec.CodeCorrupt, Cell: statecodec.CellMemory, Err: errors.New("boom")})
	tests := []struct {
		name   string
		target error
		want   bool
	}{
		{"code sentinel", statecodec.ErrCorrupt, true},
		{"code and cell", &statecodec.Error{Code: statecodec.CodeCorrupt, Cell: statecodec.CellMemory}, true},
		{"other cell", &statecodec.Error{Code: statecodec.CodeCorrupt, Cell: statecodec.CellLLMCache}, false},
		{"other code", statecodec.ErrFutureVersion, false},
		{"plain error", errors.New("state_corrupt"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errors.Is(err, tc.target); got != tc.want {
				t.Fatalf("errors.Is = %v", got)
			}
		})
	}
	if !strings.Contains(err.Error(), "memory.v1") {
		t.Fatalf("message %q does not name the cell", err)
	}
	// A future version unwraps to the migrate error, which carries the numbers.
	_, ferr := statecodec.DecodeCache(marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 5}), statecodec.CacheOptions{})
	var me *migrate.Error
	if !errors.Is(ferr, migrate.ErrFutureVersion) || !errors.As(ferr, &me) || me.Version != 5 {
		t.Fatalf("future version error %v does not unwrap to migrate", ferr)
	}
}
