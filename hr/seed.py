"""The demo CV bank (bilingual) and two draft TANs; idempotent."""
from django.contrib.auth import get_user_model

from tenants.models import Tenant

from .models import Candidate, Tan

CANDIDATES = [
    ("Li Wei", "李伟", "Backend engineer", "后端工程师", "Shanghai", ["python", "django", "postgresql", "celery", "redis"], 3),
    ("Zhang Min", "张敏", "Python developer", "Python开发工程师", "Shanghai", ["python", "django", "postgresql"], 2),
    ("Chen Jing", "陈静", "Platform engineer", "平台工程师", "Beijing", ["python", "django", "celery", "postgresql"], 3),
    ("Wang Fang", "王芳", "Java engineer", "Java工程师", "Shanghai", ["java", "spring", "mysql"], 3),
    ("Liu Yang", "刘洋", "Staff engineer", "资深工程师", "Remote", ["python", "celery"], 4),
    ("Zhao Lei", "赵磊", "Frontend engineer", "前端工程师", "Shenzhen", ["react", "typescript"], 2),
    ("Anna Schmidt", "安娜·施密特", "Junior developer", "初级开发工程师", "Shanghai", ["python", "postgresql"], 1),
    ("Sun Li", "孙丽", "Infrastructure engineer", "基础设施工程师", "Guangzhou", ["go", "kubernetes", "postgresql"], 3),
    ("Zhou Xin", "周欣", "Business analyst", "业务分析师", "Beijing", ["sql", "tableau", "excel"], 2),
    ("Maria Garcia", "玛丽亚·加西亚", "Data analyst", "数据分析师", "Beijing", ["sql", "python", "tableau", "r"], 2),
]
TANS = [
    ("Senior Backend Engineer", "高级后端工程师", "Shanghai", ["python", "django", "postgresql", "celery"], 3),
    ("Data Analyst", "数据分析师", "Beijing", ["sql", "python", "tableau"], 2),
]


def seed_demo() -> None:
    demo = Tenant.objects.filter(slug="demo").first()
    if demo is not None:
        for name, name_zh, headline, headline_zh, location, skills, level in CANDIDATES:
            Candidate.objects.update_or_create(tenant=demo, name=name, defaults={
                "name_zh": name_zh, "headline": headline, "headline_zh": headline_zh, "location": location,
                "skills": skills, "seniority": level})
        ada = get_user_model().objects.filter(username="ada").first()
        for title, title_zh, location, skills, level in TANS:
            if ada and not Tan.objects.filter(tenant=demo, title=title).exists():
                Tan.objects.create(tenant=demo, title=title, title_zh=title_zh, location=location, skills=skills,
                                   seniority=level, created_by=ada)
    other = Tenant.objects.filter(slug="other").first()
    if other is not None:
        Candidate.objects.update_or_create(tenant=other, name="Olga Other", defaults={
            "name_zh": "奥尔加", "location": "Shanghai", "skills": ["python", "sql"], "seniority": 2})
