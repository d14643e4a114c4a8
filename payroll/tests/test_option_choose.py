"""Payroll reads a reply to "which template?" as every domain does (workflows.conversation),
then as the one offered template that names the place or population the reply names."""
from payroll.reading.matching import option_choose as payroll_option_choose
from workflows.conversation import option_choose

OPTIONS = [{"label": "Shanghai Standard Monthly", "label_zh": "上海标准月薪", "answer": "Shanghai Standard Monthly"},
           {"label": "Shenzhen Factory Shifts", "label_zh": "深圳工厂排班", "answer": "Shenzhen Factory Shifts"}]


def test_payroll_places_a_reply_that_names_the_one_options_city():
    assert option_choose("whichever is for Shenzhen", OPTIONS) is None
    assert payroll_option_choose("whichever is for Shenzhen", OPTIONS) == 1
    assert option_choose("深圳那个", OPTIONS) is None
    assert payroll_option_choose("深圳那个", OPTIONS) == 1
