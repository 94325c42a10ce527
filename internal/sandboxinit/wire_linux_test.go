package sandboxinit

import (
	"errors"
	"reflect"
	"testing"
)

// fill sets every field below v to a value that is not its zero value, so
// a field the wire form forgets fails the round trip.
func fill(t *testing.T, v reflect.Value, seed *int) {
	*seed++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), seed)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), seed)
		}
	case reflect.String:
		v.SetString("s\xff,\x00" + string(rune('a'+*seed%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), seed)
	case reflect.Array:
		for i := range v.Len() {
			fill(t, v.Index(i), seed)
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(-int64(*seed))
	case reflect.Uint8:
		v.SetUint(uint64(*seed) % 256)
	case reflect.Uint32:
		v.SetUint(uint64(*seed) << 20)
	case reflect.Uint64:
		v.SetUint(uint64(*seed) << 40)
	default:
		t.Fatalf("fill: no value for a %s", v.Type())
	}
}

func TestWireRoundTrip(t *testing.T) {
	seed := 0
	var cfg Config
	fill(t, reflect.ValueOf(&cfg).Elem(), &seed)
	cfg.Version = Version
	got, err := DecodeConfig(EncodeConfig(&cfg))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, &cfg) {
		t.Errorf("config round trip:\n got %+v\nwant %+v", got, &cfg)
	}
	var res Result
	fill(t, reflect.ValueOf(&res).Elem(), &seed)
	gotRes, err := DecodeResult(EncodeResult(&res))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotRes, &res) {
		t.Errorf("result round trip:\n got %+v\nwant %+v", gotRes, &res)
	}
	// Empty slices come back nil, which the init treats the same.
	empty, err := DecodeConfig(EncodeConfig(&Config{}))
	if err != nil || empty.Plan.Ops != nil || empty.Env != nil {
		t.Errorf("empty config: %+v, %v", empty, err)
	}
}

func TestWireRejects(t *testing.T) {
	good := EncodeConfig(&Config{Script: "true", Env: []string{"A=1"}})
	for _, tc := range []struct {
		name string
		in   []byte
		want error // nil: any error
	}{
		{"empty", nil, ErrOtherVersion},
		{"gob", []byte("\x1f\xff\x81\x03\x01\x01\x0bchildConfig"), ErrOtherVersion},
		{"other version", append([]byte(Magic), 0x7e), ErrOtherVersion},
		{"truncated", good[:len(good)-3], nil},
		{"left over", append(append([]byte{}, good...), 0), nil},
		{"huge count", append(append([]byte{}, good[:len(Magic)+1]...), 0, 0xfe, 0xff, 0xff, 0xff, 0x0f), nil},
	} {
		_, err := DecodeConfig(tc.in)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

func FuzzDecodeConfig(f *testing.F) {
	f.Add(EncodeConfig(&Config{Script: "true", Env: []string{"A=1"}, Plan: Plan{Ops: []Op{{Kind: OpDir, Path: "/"}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeConfig(b)
		if err != nil {
			return
		}
		if again, err := DecodeConfig(EncodeConfig(c)); err != nil || !reflect.DeepEqual(again, c) {
			t.Errorf("re-encoding changed the config: %v", err)
		}
	})
}
