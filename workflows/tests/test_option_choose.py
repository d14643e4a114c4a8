"""Which offered option a reply picks: one reading for every domain, which a domain may
extend with its own last reading."""
from workflows.conversation import option_choose

OPTIONS = [{"label": "Shanghai Standard Monthly", "label_zh": "上海标准月薪", "answer": "Shanghai Standard Monthly"},
           {"label": "Shenzhen Factory Shifts", "label_zh": "深圳工厂排班", "answer": "Shenzhen Factory Shifts"}]


def test_a_reply_picks_by_label_ordinal_or_close_variant():
    assert option_choose("Shenzhen Factory Shifts", OPTIONS) == 1
    assert option_choose("the second", OPTIONS) == 1
    assert option_choose("第一个", OPTIONS) == 0
    assert option_choose("shanghai standard montly", OPTIONS) == 0
    assert option_choose("the third", OPTIONS) is None
    assert option_choose("no idea", OPTIONS) is None


def test_a_domains_last_reading_places_only_what_the_generic_one_left():
    seen = []

    def also(text, labels):
        seen.append((text, labels))
        return 1

    assert option_choose("the second", OPTIONS, also=also) == 1 and seen == []
    assert option_choose("whichever is in the south", OPTIONS, also=also) == 1
    assert seen == [("whichever is in the south", [["shanghai standard monthly", "", "上海标准月薪", "shanghai standard monthly"],
                                                  ["shenzhen factory shifts", "", "深圳工厂排班", "shenzhen factory shifts"]])]

