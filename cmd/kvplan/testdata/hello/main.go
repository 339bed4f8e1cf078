// Command hello is the hello-world Go binary that BenchmarkStartup runs
// beside kvplan: the floor of a Go process's start-up on this machine.
package main

import "fmt"

func main() { fmt.Println("hello, world") }
