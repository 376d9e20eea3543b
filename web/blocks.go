package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/designs"
)

// editorTools reads what the editor offers beside its canvas: the
// account's merge tags and saved blocks.
func (w *Web) editorTools(c *fiber.Ctx) (designs.Tools, error) {
	ctx, acct := c.UserContext(), accountID(c)
	tags, err := w.svc.Fields.MergeTags(ctx, acct)
	if err != nil {
		return designs.Tools{}, err
	}
	blocks, err := w.svc.Blocks.List(ctx, acct)
	if err != nil {
		return designs.Tools{}, err
	}
	return designs.Tools{MergeTags: designs.MergeTagGroups(tags), Blocks: blocks, CSRF: csrf(c)}, nil
}

// blocksAnswer renders the saved blocks panel (to htmx) with a flash
// message, or sends a browser without htmx to the templates page.
func (w *Web) blocksAnswer(c *fiber.Ctx, status int, t designs.Tools, kind, msg string) error {
	if !partial(c) {
		if msg != "" {
			w.flash(c, kind, msg)
		}
		return c.Redirect(designs.GalleryURL, fiber.StatusSeeOther)
	}
	if msg == "" {
		return render(c, status, designs.BlocksPanel(t))
	}
	return render(c, status, designs.BlocksPanel(t), flashOOB(kind, msg))
}

// saveBlock saves the block chosen in the editor under a name: the panel
// again, with the new block listed, or with the name's problems (422).
func (w *Web) saveBlock(c *fiber.Ctx) error {
	in := service.BlockInput{Name: formValue(c, "name"), HTML: formValue(c, "html"), CSS: formValue(c, "css")}
	b, err := w.svc.Blocks.Create(c.UserContext(), accountID(c), in)
	if err != nil && !isValidation(err) {
		return err
	}
	t, terr := w.editorTools(c)
	if terr != nil {
		return terr
	}
	if err != nil {
		t.Name, t.Errors = in.Name, fieldErrors(err)
		return w.blocksAnswer(c, fiber.StatusUnprocessableEntity, t, "", "")
	}
	return w.blocksAnswer(c, fiber.StatusOK, t, views.FlashSuccess, views.T("editor.block_saved", "Name", b.Name))
}

// blockAnswer is a saved block as the editor's script inserts it.
type blockAnswer struct {
	Name string `json:"name"`
	HTML string `json:"html"`
	CSS  string `json:"css"`
}

// showBlock answers a saved block of the account's markup and styles
// (JSON) to the editor's script.
func (w *Web) showBlock(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	b, err := w.svc.Blocks.Get(c.UserContext(), accountID(c), id)
	if err != nil {
		return err
	}
	return c.JSON(blockAnswer{Name: b.Name, HTML: b.HTML, CSS: b.CSS})
}

// deleteBlock deletes a saved block of the account: the panel again.
func (w *Web) deleteBlock(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	if err := w.svc.Blocks.Delete(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	t, err := w.editorTools(c)
	if err != nil {
		return err
	}
	return w.blocksAnswer(c, fiber.StatusOK, t, views.FlashSuccess, views.T("editor.block_deleted"))
}
