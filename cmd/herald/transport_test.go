package main

import (
	"herald/delivery"
	"herald/service"
)

func openTransportForTest(svc *service.Service) (delivery.Transport, error) {
	return delivery.OpenTransport("", 1, svc.Outbox)
}
