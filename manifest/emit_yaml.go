package manifest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Builders of the YAML the emitters write: mappings keep the order their
// keys are given in, so the output is deterministic.

// ymap builds a mapping from key, value pairs; a nil value (or an empty
// string, list or mapping) leaves its key out.
func ymap(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		v := yvalue(kv[i+1])
		if v == nil {
			continue
		}
		n.Content = append(n.Content, ystr(k), v)
	}
	return n
}

// yvalue turns a Go value into a node; nil for what is left out.
func yvalue(v any) *yaml.Node {
	switch x := v.(type) {
	case nil:
		return nil
	case *yaml.Node:
		if x == nil || (x.Kind == yaml.MappingNode && len(x.Content) == 0 && x.Style != yaml.FlowStyle) {
			return nil
		}
		return x
	case string:
		if x == "" {
			return nil
		}
		return ystr(x)
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x)}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	case []string:
		if len(x) == 0 {
			return nil
		}
		s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			s.Content = append(s.Content, ystr(e))
		}
		return s
	case []*yaml.Node:
		if len(x) == 0 {
			return nil
		}
		return yseq(x...)
	}
	panic(fmt.Sprintf("manifest: no YAML for %T", v)) // only kvplan's own values reach here
}

// ystr is a string scalar; a JSON value is single-quoted, as the engines'
// examples write it, and a string that reads as another type is quoted.
func ystr(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") {
		n.Style = yaml.SingleQuotedStyle
	}
	return n
}

func yseq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// yempty is an empty mapping written as {} (KServe's router: scheduler: {}).
func yempty() *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
}

// yenv is a container env list of name, value pairs.
func yenv(kv ...string) []*yaml.Node {
	var out []*yaml.Node
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, ymap("name", kv[i], "value", kv[i+1]))
	}
	return out
}

// encodeYAML writes documents, the first with the header as its comment.
func encodeYAML(header []string, docs ...*yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	for _, h := range header {
		if h == "" {
			b.WriteString("#\n")
			continue
		}
		b.WriteString("# " + h + "\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
