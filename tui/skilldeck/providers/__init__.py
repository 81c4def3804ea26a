"""Skill sources outside the core: implementations of
:class:`~skilldeck.core.sources.SkillSource` for other stores."""
