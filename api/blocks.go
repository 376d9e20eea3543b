package api

import (
	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

// Saved blocks (beyond the spec): pieces of designs the editor saves under
// a name and inserts into other designs. A block's content is what the
// service stores: its markup (html) and the editor's style rules for it
// (css).

// blockAnswer is one block as the API answers it.
func blockAnswer(b *models.SavedBlock) fiber.Map {
	return fiber.Map{"id": b.ID, "name": b.Name, "html": b.HTML, "css": b.CSS, "created_at": b.CreatedAt, "updated_at": b.UpdatedAt}
}

// listBlocks answers the account's blocks by name (an account keeps at
// most a few hundred: the service bounds them, so one read answers all).
func (a *API) listBlocks(c *fiber.Ctx) error {
	bs, err := a.svc.Blocks.List(c.UserContext(), account(c))
	if err != nil {
		return fail(c, err)
	}
	out := make([]fiber.Map, 0, len(bs))
	for i := range bs {
		out = append(out, blockAnswer(&bs[i]))
	}
	return success(c, fiber.Map{"blocks": out})
}

func (a *API) createBlock(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	b, err := a.svc.Blocks.Create(c.UserContext(), account(c), service.BlockInput{Name: f.Get("name"), HTML: f.Get("html"), CSS: f.Get("css")})
	if err != nil {
		return fail(c, err)
	}
	return success(c, blockAnswer(b))
}

func (a *API) deleteBlock(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "id")
	if err == nil {
		err = a.svc.Blocks.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}
