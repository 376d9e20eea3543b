package audience
