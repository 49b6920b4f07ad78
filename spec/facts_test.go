package spec

import (
	"math/big"
	"testing"
)

func TestFloorCeilRat(t *testing.T) {
	for _, tt := range []struct {
		r           string
		floor, ceil int64
	}{
		{"3", 3, 3},
		{"3/2", 1, 2},
		{"-3/2", -2, -1},
		{"-3", -3, -3},
		{"1/1000", 0, 1},
		{"-1/1000", -1, 0},
	} {
		r, _ := new(big.Rat).SetString(tt.r)
		if got := intBelow(r, false); got.Int64() != tt.floor {
			t.Errorf("intBelow(%s) = %s; want %d", tt.r, got, tt.floor)
		}
		if got := intAbove(r, false); got.Int64() != tt.ceil {
			t.Errorf("intAbove(%s) = %s; want %d", tt.r, got, tt.ceil)
		}
	}
}
