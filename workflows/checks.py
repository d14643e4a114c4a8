from django.core import checks


@checks.register()
def tool_registry_check(app_configs, **kwargs):
    from workflows.tools import registry_problems

    return [checks.Error(problem, id="keel.E001") for problem in registry_problems()]
