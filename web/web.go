// Package web is the console (pages made interactive with htmx) and the
// public pages recipients open.
package web

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// Options tune the console.
type Options struct {
	BaseURL string // public address; https means Secure cookies
}

// Web holds what every console handler needs.
type Web struct {
	svc *service.Service
	opt Options
}

// New builds the console over svc.
func New(ctx context.Context, svc *service.Service, opt Options) (*Web, error) {
	return &Web{svc: svc, opt: opt}, nil
}

// Mount registers every console and public route on app.
func (w *Web) Mount(app *fiber.App) {}

// ErrorHandler answers errors of console routes.
func ErrorHandler(c *fiber.Ctx, err error) error {
	code := fiber.StatusInternalServerError
	if fe, ok := err.(*fiber.Error); ok {
		code = fe.Code
	}
	return c.Status(code).SendString(fiber.ErrInternalServerError.Message)
}
