package fastjson_test

import (
	"fmt"

	"github.com/kdyn/kdyn/internal/fastjson"
)

func ExampleDecoder_DecodeList() {
	body := []byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"},
		"items":[{"metadata":{"name":"a","labels":{"app":"web"}}},{"metadata":{"name":"b","labels":{"app":"web"}}}]}`)
	d := fastjson.NewDecoder(fastjson.Options{InternKeys: true, InternValues: true})
	cache := map[string]map[string]any{}
	list, err := d.DecodeList(body, func(i int, obj map[string]any) error {
		name := obj["metadata"].(map[string]any)["name"].(string)
		cache[name] = obj
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(list["kind"], list["metadata"].(map[string]any)["resourceVersion"], len(cache))
	// Output: ConfigMapList 42 2
}

func ExampleScan() {
	stream := []byte(`{"type":"ADDED","object":{"n":1}}` + "\n" + `{"type":"DELETED","object":{"n":2.5}}` + "\n" + `{"type":"MOD`)
	for {
		start, end, err := fastjson.Scan(stream)
		if err == fastjson.ErrIncomplete {
			fmt.Printf("need more data after %q\n", stream[start:])
			break
		}
		if err != nil {
			panic(err)
		}
		ev, _ := fastjson.DecodeObject(stream[start:end])
		fmt.Printf("%v %#v\n", ev["type"], ev["object"].(map[string]any)["n"])
		stream = stream[end:]
	}
	// Output:
	// ADDED 1
	// DELETED 2.5
	// need more data after "{\"type\":\"MOD"
}

func ExampleDecode() {
	v, err := fastjson.Decode([]byte(`{"replicas":3,"ratio":0.5,"big":9223372036854775808,"tags":["a",null,true]}`))
	if err != nil {
		panic(err)
	}
	m := v.(map[string]any)
	fmt.Printf("%T %T %T %#v\n", m["replicas"], m["ratio"], m["big"], m["tags"])
	_, err = fastjson.Decode([]byte(`{"a":1,}`))
	fmt.Println(err)
	// Output:
	// int64 float64 float64 []interface {}{"a", interface {}(nil), true}
	// fastjson: invalid character '}' looking for beginning of object key string at offset 7
}
