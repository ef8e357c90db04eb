"""The look-ahead: a pytest plugin that runs the next spec items' pipelines while pytest walks them in
order (:mod:`.scheduler`), by rules that keep concurrency from changing a verdict (:mod:`.rules`),
over the items this process runs next (:mod:`.item_order`)."""
