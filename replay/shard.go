package replay

import "github.com/beamagents/beamagents/agent/drive"

// Sharded is inputs as a pipeline of an agent sharded n ways keys them (drive.Route): each
// external event in its shard's sub-key, every other value where it was, keys in the order
// their first value came, values in arrival order. With n of 1 or less it is inputs.
func Sharded(n int, inputs []Input) []Input {
	if n <= 1 {
		return inputs
	}
	var out []Input
	index := map[string]int{}
	for _, in := range inputs {
		for _, v := range in.Values {
			key, value := drive.Route(n, in.Entity, v)
			i, ok := index[string(key)]
			if !ok {
				i = len(out)
				index[string(key)] = i
				out = append(out, Input{Entity: key})
			}
			out[i].Values = append(out[i].Values, value)
		}
	}
	return out
}
