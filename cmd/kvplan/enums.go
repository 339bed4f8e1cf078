package main

import "github.com/kvplan/kvplan/catalog"

// weightDtypes are the values of --weight-dtype: the catalog's weight
// dtypes and fp4 (NVIDIA's, nvfp4).
var weightDtypes = append([]string{"fp4"}, catalog.WeightDtypes...)

// weightDtype reads a --weight-dtype value in any case (FP8 is fp8), with a
// did-you-mean for a mistyped one; fp4 is NVIDIA's format, nvfp4.
func weightDtype(v string) (string, error) {
	d, err := parseEnumFlag("--weight-dtype", v, weightDtypes)
	if d == "fp4" {
		d = "nvfp4"
	}
	return d, err
}
