package automations

// NavAutomations is the navigation entry of the automations pages (the
// layout's entry has Key "automations", Href "/automations").
const NavAutomations = "automations"
