// Command etcd is a thin wrapper around etcdmain, as etcd's own server/main.go is.
// etcd's go.mod files carry replace directives, so `go install go.etcd.io/etcd/server/v3`
// fails; building through this module resolves the published modules instead.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
