"""Chinese for the words the outage work added (a busy database: config/api.py, templates/503.html)."""
ZH = {
    "Keel is busy right now; nothing was changed by this request. Try again in %(seconds)s seconds.":
        "Keel 当前繁忙；本次请求没有做任何更改。请在 %(seconds)s 秒后重试。",
    "Keel is busy": "Keel 正忙",
    "Keel has more requests than it can answer at this moment. Nothing you submitted was half-applied: what was saved stays saved. This page tries again in %(seconds)s seconds.":
        "Keel 此刻收到的请求超出了它能应答的数量。你提交的内容不会只完成一半：已保存的仍然保存着。本页将在 %(seconds)s 秒后重试。",
}
