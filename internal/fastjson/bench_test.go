package fastjson

import (
	"encoding/json"
	"runtime"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

var (
	benchListOnce sync.Once
	benchList     []byte
)

const benchItems = 10000

func listBody(b *testing.B) []byte {
	benchListOnce.Do(func() { benchList = genList(benchItems, 1) })
	b.SetBytes(int64(len(benchList)))
	return benchList
}

// retained reports the live heap held by what decode returns, after GC.
func retained(decode func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := decode()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
}

func BenchmarkDecodeList(b *testing.B) {
	b.Run("apimachinery", func(b *testing.B) {
		data := listBody(b)
		decode := func() any {
			list := &unstructured.UnstructuredList{}
			if _, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, list); err != nil {
				b.Fatal(err)
			}
			return list
		}
		mib := retained(decode)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			decode()
		}
		b.ReportMetric(mib, "retained-MiB")
	})
	b.Run("encoding-json", func(b *testing.B) {
		data := listBody(b)
		decode := func() any {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
			return v
		}
		mib := retained(decode)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			decode()
		}
		b.ReportMetric(mib, "retained-MiB")
	})
	b.Run("util-json", func(b *testing.B) {
		data := listBody(b)
		decode := func() any {
			var v any
			if err := utiljson.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
			return v
		}
		mib := retained(decode)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			decode()
		}
		b.ReportMetric(mib, "retained-MiB")
	})
	b.Run("fastjson-Decode", func(b *testing.B) {
		data := listBody(b)
		decode := func() any {
			v, err := Decode(data)
			if err != nil {
				b.Fatal(err)
			}
			return v
		}
		mib := retained(decode)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			decode()
		}
		b.ReportMetric(mib, "retained-MiB")
	})
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"fastjson-DecodeList", Options{}},
		{"fastjson-DecodeList-keys", Options{InternKeys: true}},
		{"fastjson-DecodeList-keys+values", Options{InternKeys: true, InternValues: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := listBody(b)
			d := NewDecoder(bc.opts)
			decode := func() any {
				items := make([]map[string]any, 0, benchItems)
				list, err := d.DecodeList(data, func(_ int, obj map[string]any) error {
					items = append(items, obj)
					return nil
				})
				if err != nil || len(items) != benchItems {
					b.Fatal(err, len(items))
				}
				return []any{list, items}
			}
			mib := retained(func() any { return []any{decode(), d} })
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				decode()
			}
			b.ReportMetric(mib, "retained-MiB")
		})
	}
}

func BenchmarkDecodeObject(b *testing.B) {
	corpus := k8sCorpus()
	for _, obj := range []struct {
		name string
		data []byte
	}{{"ConfigMap", corpus[0]}, {"Deployment", corpus[2]}} {
		b.Run(obj.name+"/apimachinery", func(b *testing.B) {
			b.SetBytes(int64(len(obj.data)))
			b.ReportAllocs()
			for range b.N {
				// What UnstructuredJSONScheme does for one object.
				m := make(map[string]any)
				if err := utiljson.Unmarshal(obj.data, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, bc := range []struct {
			name string
			opts Options
		}{{"fastjson", Options{}}, {"fastjson-keys", Options{InternKeys: true}}, {"fastjson-keys+values", Options{InternKeys: true, InternValues: true}}} {
			b.Run(obj.name+"/"+bc.name, func(b *testing.B) {
				d := NewDecoder(bc.opts)
				b.SetBytes(int64(len(obj.data)))
				b.ReportAllocs()
				for range b.N {
					if _, err := d.DecodeObject(obj.data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkScan(b *testing.B) {
	data := listBody(b)
	b.ReportAllocs()
	for range b.N {
		if _, _, err := Scan(data); err != nil {
			b.Fatal(err)
		}
	}
}
