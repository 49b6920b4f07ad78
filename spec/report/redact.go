package report

import (
	"reflect"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// redacted returns a copy of r with every secret rd knows hidden in every
// string it holds: the renderers escape that copy for their format, so
// no escaping can keep a key from being found, and no key, once hidden,
// can break a document.
func (r Run) redacted(rd *exchange.Redactor) Run {
	return mapStrings(reflect.ValueOf(r), rd.String).Interface().(Run)
}

// mapStrings returns a deep copy of v with f applied to every string it
// holds in an exported field, a slice or behind a pointer; the rest (a
// number, a time) is copied as it is.
func mapStrings(v reflect.Value, f func(string) string) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.String:
		out.SetString(f(v.String()))
	case reflect.Struct:
		out.Set(v)
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(mapStrings(v.Field(i), f))
			}
		}
	case reflect.Slice:
		if !v.IsNil() {
			out.Set(reflect.MakeSlice(v.Type(), v.Len(), v.Len()))
			for i := range v.Len() {
				out.Index(i).Set(mapStrings(v.Index(i), f))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			out.Set(mapStrings(v.Elem(), f).Addr())
		}
	default:
		out.Set(v)
	}
	return out
}
