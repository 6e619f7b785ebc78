package mountmgr

import (
	"encoding/json"
	"reflect"
	"unicode/utf8"
)

// wireText carries text that comes from a vault (names, details) across the socket byte for
// byte: JSON strings are UTF-8 (encoding/json puts U+FFFD for bytes that are not), and names
// need not be, so text that is not goes as {"b": base64 bytes}. Valid UTF-8 encodes as a
// plain string, as before: only names that a peer predating wireText would mangle change, and
// such a peer refuses the object with a decode error instead of misreading it.
type wireText string

func (t wireText) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(t)) {
		return json.Marshal(string(t))
	}
	return json.Marshal(struct {
		B []byte `json:"b"`
	}{[]byte(t)})
}

func (t *wireText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var raw struct {
			B []byte `json:"b"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		*t = wireText(raw.B)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = wireText(s)
	return nil
}

// wired is a vault value (a conflict, a settle's outcome, a finding) on the wire: its JSON is
// the value's, with every string in it (in fields, lists and nested structs) a wireText.
type wired[T any] struct{ v T }

func (w wired[T]) MarshalJSON() ([]byte, error) {
	out := reflect.New(wireType(reflect.TypeFor[T]())).Elem()
	copyWire(out, reflect.ValueOf(w.v))
	return json.Marshal(out.Interface())
}

func (w *wired[T]) UnmarshalJSON(b []byte) error {
	in := reflect.New(wireType(reflect.TypeFor[T]()))
	if err := json.Unmarshal(b, in.Interface()); err != nil {
		return err
	}
	copyWire(reflect.ValueOf(&w.v).Elem(), in.Elem())
	return nil
}

// wireType is t with its strings made wireText: the same fields, names and tags, so text that
// is UTF-8 encodes as it would in t. A struct with JSON of its own (time.Time) stays as it is.
func wireType(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.String:
		return reflect.TypeFor[wireText]()
	case reflect.Slice:
		return reflect.SliceOf(wireType(t.Elem()))
	case reflect.Struct:
		if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
			return t
		}
		fields := make([]reflect.StructField, t.NumField())
		for i := range fields {
			fields[i] = t.Field(i)
			fields[i].Type = wireType(fields[i].Type)
		}
		return reflect.StructOf(fields)
	}
	return t
}

// copyWire sets dst to src, one of a type and the other of its wireType.
func copyWire(dst, src reflect.Value) {
	switch {
	case dst.Type() == src.Type():
		dst.Set(src)
	case dst.Kind() == reflect.String:
		dst.SetString(src.String())
	case dst.Kind() == reflect.Slice:
		if !src.IsNil() {
			dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
			for i := range src.Len() {
				copyWire(dst.Index(i), src.Index(i))
			}
		}
	default: // a struct: field by field; JSON has no unexported ones
		for i := range dst.NumField() {
			if dst.Type().Field(i).IsExported() {
				copyWire(dst.Field(i), src.Field(i))
			}
		}
	}
}

// wiredList is list on the wire.
func wiredList[T any](list []T) []wired[T] {
	out := make([]wired[T], len(list))
	for i, v := range list {
		out[i] = wired[T]{v}
	}
	return out
}
