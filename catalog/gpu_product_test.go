package catalog_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// TestGPUProducts: each nvidia.com/gpu.product a GPU carries is the device
// name its gpu_product_source quotes (torch writes it with '_' for spaces,
// GPU feature discovery with '-'), the label finds the GPU, and the GPUs
// without one are the ones listed here with their reason.
func TestGPUProducts(t *testing.T) {
	c := load(t)
	quoted := regexp.MustCompile(`device name (\S+)`)
	var without []string
	for _, g := range c.GPUs {
		if g.GPUProduct == "" {
			without = append(without, g.Name)
			continue
		}
		m := quoted.FindStringSubmatch(g.GPUProductSource)
		if m == nil {
			t.Errorf("%s: gpu_product_source quotes no device name: %s", g.Name, g.GPUProductSource)
			continue
		}
		if want := strings.ReplaceAll(m[1], "_", "-"); g.GPUProduct != want {
			t.Errorf("%s: gpu_product %s, but the device name its source quotes, %s, is labelled %s", g.Name, g.GPUProduct, m[1], want)
		}
		if found, err := c.GPU(g.GPUProduct); err != nil || found.Name != g.Name {
			t.Errorf("%s: looking up its label %s finds %v, %v", g.Name, g.GPUProduct, found, err)
		}
	}
	sort.Strings(without)
	// No device name kvplan can cite was read for the A10G, T4, V100, A100
	// 40 GB, GH200, RTX A6000, RTX 3090 and the laptop part; the AMD GPUs
	// carry no nvidia.com label.
	want := "a100-40gb a10g gh200 mi300x mi325x rtx-a6000 rtx3090 rtx4060-laptop t4 v100-32gb"
	if got := strings.Join(without, " "); got != want {
		t.Errorf("GPUs without a gpu_product: %q, want %q", got, want)
	}
}

// TestGPUProductValidation: a label Kubernetes would refuse, or one with no
// source, is an error at its line and field.
func TestGPUProductValidation(t *testing.T) {
	const base = `[[gpu]]
name = "x1"
memory = "80GiB"
bf16_tflops = 100
memory_bandwidth = "1TB/s"
source = "test"
gpu_product = "NVIDIA-X1"
gpu_product_source = "test"
`
	if _, err := catalog.Parse("g.toml", []byte(base)); err != nil {
		t.Fatalf("the base entry is valid: %v", err)
	}
	for _, c := range []struct{ replace, with, want string }{
		{`gpu_product = "NVIDIA-X1"`, `gpu_product = "NVIDIA X1"`, `g.toml:7: gpu "x1": gpu_product: "NVIDIA X1": a Kubernetes label value`},
		{`gpu_product = "NVIDIA-X1"`, `gpu_product = "-NVIDIA-X1"`, `gpu_product: "-NVIDIA-X1": a Kubernetes label value`},
		{`gpu_product = "NVIDIA-X1"`, `gpu_product = "` + strings.Repeat("A", 64) + `"`, `a Kubernetes label value is at most 63 characters`},
		{`gpu_product_source = "test"`, ``, `gpu_product_source: missing`},
	} {
		_, err := catalog.Parse("g.toml", []byte(strings.Replace(base, c.replace, c.with, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant it to contain %s", c.with, err, c.want)
		}
	}
}
