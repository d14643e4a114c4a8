from django.core import checks

from .tools import registry_problems


@checks.register()
def tool_registry_check(app_configs, **kwargs):
    return [checks.Error(problem, id="keel.E001") for problem in registry_problems()]
