from django.core import checks


@checks.register()
def tool_registry_check(app_configs, **kwargs):
    from agents.registry import registry_problems

    return [checks.Error(problem, id="keel.E001") for problem in registry_problems()]
