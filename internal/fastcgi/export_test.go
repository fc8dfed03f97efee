package fastcgi

import "net/http"

// For the external tests (nginx_test.go), which import packages that may
// one day import this one.
var (
	EchoHandler  = http.HandlerFunc(echoHandler)
	HelloHandler = http.HandlerFunc(helloHandler)
)
