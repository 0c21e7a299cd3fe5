package model

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

const script = `
# comment
{"entity":"c1","seq":0,"step":0,"response":{"case": "x",  "fields":{}},"input_tokens":10,"output_tokens":4}
{"entity":"c1","seq":0,"response_text":"step>0 of c1/0"}
{"last":"shipped","response_text":"last rule"}
{"contains":"refund","response_text":"refund rule"}
`

func TestScriptedMatching(t *testing.T) {
	s, err := ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		req     Request
		want    string
		wantErr error
	}{
		{"exact key, raw JSON kept byte for byte", Request{EntityKey: []byte("c1"), Seq: 0, Step: 0}, `{"case": "x",  "fields":{}}`, nil},
		{"partial key", Request{EntityKey: []byte("c1"), Seq: 0, Step: 3}, "step>0 of c1/0", nil},
		{"contains", Request{EntityKey: []byte("c2"), Messages: []Message{{Role: RoleUser, Content: "my refund"}}}, "refund rule", nil},
		{"last message", Request{EntityKey: []byte("c2"), Messages: []Message{{Role: RoleUser, Content: "my refund"}, {Role: RoleTool, Content: `{"status":"shipped"}`}}}, "last rule", nil},
		{"last matches only the last message", Request{EntityKey: []byte("c2"), Messages: []Message{{Role: RoleUser, Content: "shipped? no refund"}, {Role: RoleTool, Content: "{}"}}}, "refund rule", nil},
		{"no rule", Request{EntityKey: []byte("c2")}, "", ErrNoScript},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := s.Generate(context.Background(), &tc.req)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(resp.Text) != tc.want {
				t.Fatalf("Generate = %q, %v; want %q", resp.Text, err, tc.want)
			}
		})
	}
	if s.Calls() != 5 {
		t.Fatalf("Calls = %d, want 5 (a miss is not a call)", s.Calls())
	}
	resp, _ := s.Generate(context.Background(), &Request{EntityKey: []byte("c1")})
	if resp.Usage != (Usage{InputTokens: 10, OutputTokens: 4}) || resp.Model != "scripted" {
		t.Fatalf("usage/model = %+v %q", resp.Usage, resp.Model)
	}
	resp.Text[0] = 'X'
	again, _ := s.Generate(context.Background(), &Request{EntityKey: []byte("c1")})
	if again.Text[0] != '{' {
		t.Fatal("callers can mutate the script through a response")
	}
}

func TestScriptErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"not json":            "{",
		"both responses":      `{"response":1,"response_text":"x"}`,
		"no response":         `{"entity":"a"}`,
		"unknown member":      `{"response":1,"when":"now"}`,
		"trailing data":       `{"response":1} {"response":2}`,
		"wrong type for step": `{"step":-1,"response":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseScript([]byte(doc)); !errors.Is(err, ErrScript) {
				t.Fatalf("ParseScript(%q) = %v, want ErrScript", doc, err)
			}
		})
	}
}

func TestScriptedStream(t *testing.T) {
	s, _ := ParseScript([]byte(`{"response_text":"0123456789abcdefXYZ"}`))
	s.ChunkBytes = 4
	var got [][]byte
	resp, err := s.Stream(context.Background(), &Request{}, func(c []byte) error {
		got = append(got, bytes.Clone(c))
		return nil
	})
	if err != nil || len(got) != 5 || string(bytes.Join(got, nil)) != string(resp.Text) {
		t.Fatalf("chunks %q, %v", got, err)
	}
	stop := errors.New("refused early")
	n := 0
	_, err = s.Stream(context.Background(), &Request{}, func([]byte) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, stop) || n != 2 {
		t.Fatalf("cancel: err %v after %d chunks", err, n)
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add([]byte(script))
	f.Add([]byte(`{"response":[1,2,3]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript(data)
		if err != nil {
			return
		}
		for _, r := range s.rules {
			if (r.Response == nil) == (r.ResponseText == nil) {
				t.Fatal("rule without exactly one response")
			}
		}
	})
}
