package facts

import "reflect"

// WithDefaults returns c with every zero field set to its DefaultConfig
// value, so a partly filled Config never zeroes the thresholds it leaves
// out.
func (c Config) WithDefaults() Config {
	v, def := reflect.ValueOf(&c).Elem(), reflect.ValueOf(DefaultConfig())
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			v.Field(i).Set(def.Field(i))
		}
	}
	return c
}
