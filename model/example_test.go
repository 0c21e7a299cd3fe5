package model_test

import (
	"context"
	"fmt"

	"github.com/beamagents/beamagents/model"
)

func ExampleScripted() {
	m, err := model.ParseScript([]byte(`{"entity":"customer-1","seq":0,"step":0,"response":{"case":"support.reply","fields":{"support.reply.text":"On its way."}}}`))
	if err != nil {
		panic(err)
	}
	req := &model.Request{Model: "scripted", EntityKey: []byte("customer-1"), Seq: 0, Step: 0}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(resp.Text))
	fmt.Println(len(model.CacheKey(req)))
	// Output:
	// {"case":"support.reply","fields":{"support.reply.text":"On its way."}}
	// 64
}
