import { recordAudit } from '../../audit.js';
import type { OnboardingPacket as OnboardingPacketRow, Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { companyNameOf, UNNAMED_COMPANY } from './company.js';
import { prepareOnboardingPacket } from './onboarding-packet.js';
import type { SalaryRange } from './types.js';

export type { OnboardingPacketRow };

export interface OnboardingCommand {
  processId: string;
  candidateId: string;
  jobDesignData: Record<string, unknown>;
  candidateName: string;
  salary: SalaryRange;
  location: string;
}

const json = (value: unknown) => value as Prisma.InputJsonValue;

/**
 * Generates the onboarding packet of a candidate and stores it as the next generation for the
 * (tenant, process, candidate); earlier generations stay as history. The row and its audit entry commit
 * together.
 */
export async function generateOnboardingPacket(
  context: Actor,
  command: OnboardingCommand,
): Promise<OnboardingPacketRow> {
  const { tenantId, sub } = context.viewer;
  const issuedAt = new Date();
  const packet = prepareOnboardingPacket({
    candidateName: command.candidateName,
    companyName: companyNameOf(command.jobDesignData) ?? UNNAMED_COMPANY,
    jobDesign: command.jobDesignData,
    salary: command.salary,
    location: command.location,
    issuedAt,
  });
  return context.prisma.$transaction(async (tx) => {
    // Concurrent generations for the same candidate queue here so each gets its own generation number.
    const lockKey = `onboarding:${tenantId}:${command.processId}:${command.candidateId}`;
    await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`;
    const latest = await tx.onboardingPacket.aggregate({
      where: { tenantId, processId: command.processId, candidateId: command.candidateId },
      _max: { generation: true },
    });
    const generation = (latest._max.generation ?? 0) + 1;
    const row = await tx.onboardingPacket.create({
      data: {
        tenantId,
        processId: command.processId,
        candidateId: command.candidateId,
        generation,
        candidateName: command.candidateName,
        location: command.location,
        salary: json(command.salary),
        jurisdiction: json(packet.jurisdiction),
        offerLetter: packet.offerLetter,
        checklist: json(packet.checklist),
        complianceReminders: json(packet.complianceReminders),
        createdBy: sub,
        requestId: context.requestId,
        createdAt: issuedAt,
      },
    });
    await recordAudit(tx, context, {
      action: 'hiring.onboarding_packet.generate',
      targetType: 'onboarding_packet',
      targetId: row.id,
      outcome: 'generated',
      details: {
        process_id: command.processId,
        candidate_id: command.candidateId,
        generation,
        jurisdiction: packet.jurisdiction.subdivision ?? packet.jurisdiction.country,
        reminders: packet.complianceReminders.reminders.length,
      },
    });
    return row;
  });
}

/** The latest generation of a candidate's packet in the caller's tenant, or null. */
export function latestOnboardingPacket(
  context: Actor,
  processId: string,
  candidateId: string,
): Promise<OnboardingPacketRow | null> {
  return context.prisma.onboardingPacket.findFirst({
    where: { tenantId: context.viewer.tenantId, processId, candidateId },
    orderBy: { generation: 'desc' },
  });
}

/** The generations before `packet` (already read in its tenant), newest first. */
export function earlierOnboardingPackets(
  prisma: Actor['prisma'],
  packet: Pick<OnboardingPacketRow, 'tenantId' | 'processId' | 'candidateId' | 'generation'>,
): Promise<OnboardingPacketRow[]> {
  return prisma.onboardingPacket.findMany({
    where: {
      tenantId: packet.tenantId,
      processId: packet.processId,
      candidateId: packet.candidateId,
      generation: { lt: packet.generation },
    },
    orderBy: { generation: 'desc' },
  });
}
