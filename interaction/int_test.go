package interaction_test

import (
	"math"
	"testing"

	"github.com/beamagents/beamagents/interaction"
)

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"0", true}, {"-1", true}, {"18446744073709551615", true}, {"-9223372036854775808", true},
		{"18446744073709551616", false}, {"-9223372036854775809", false}, {"-0", false}, {"01", false},
		{"+1", false}, {"1e3", false}, {"", false}, {"-", false}, {" 1", false},
	} {
		v, ok := interaction.ParseInt(tc.in)
		if ok != tc.ok || ok && v.String() != tc.in {
			t.Errorf("ParseInt(%q) = %v, %v", tc.in, v, ok)
		}
	}
	order := []interaction.Int{interaction.IntOf(math.MinInt64), interaction.IntOf(-1), interaction.IntOf(0), interaction.UintOf(1), interaction.IntOf(math.MaxInt64), interaction.UintOf(math.MaxUint64)}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := order[i].Cmp(order[j]); got != want {
				t.Errorf("%s cmp %s = %d", order[i], order[j], got)
			}
		}
	}
	if v, ok := interaction.IntOf(math.MinInt64).Int64(); !ok || v != math.MinInt64 {
		t.Error("Int64 of MinInt64")
	}
	if _, ok := interaction.UintOf(math.MaxUint64).Int64(); ok {
		t.Error("Int64 of MaxUint64 fits")
	}
	if _, ok := interaction.IntOf(-1).Uint64(); ok {
		t.Error("Uint64 of -1 fits")
	}
}
